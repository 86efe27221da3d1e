"""Row 5: the notebook suite under nbval, next to the floor of running empty notebooks.

The suite: `pytest --nbval --nbval-current-env notebooks/` (total wall time, and
per notebook from the JUnit report: each notebook's cells, its kernel start
included). The floor: the same command on as many empty notebooks (one `pass`
cell each), i.e. what starting kernels and pytest costs with no lesson in them.
Suite and floor alternate. With no notebooks yet, only the floor is measured.

The target is over every chapter notebook. When there are chapters past 09 (10_long_runs,
11_approval_mcp, 12_capstone), the same command also runs on chapters 00-09 alone, next to a floor of as many
empty notebooks, in the same rotating rounds: the figure recorded before those chapters
existed (2.78 x, ten notebooks) compares like for like with that one.

With BENCH_BEFORE set to another checkout of the project (the code before a change, e.g. a
`git worktree add --detach ../before main`), its notebooks run as a third contender in the
same rotating rounds, with its own toolkit on PYTHONPATH: the ratio of this tree's suite to
that one's, per round, is the change's effect measured side by side.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from ._stats import line, per_round, rotation, row, summarize, target

KEY = "notebooks"
TITLE = "笔记本套件（nbval）对比空笔记本下限"
EN = "Notebook suite (nbval) vs the empty-notebook floor"

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

EMPTY_NOTEBOOK = """{
 "cells": [{"cell_type": "code", "execution_count": 1, "id": "c0", "metadata": {}, "outputs": [],
            "source": ["pass"]}],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
              "language_info": {"name": "python"}},
 "nbformat": 4, "nbformat_minor": 5
}
"""


def first_ten(notebooks: list[Path]) -> list[Path]:
    """The chapters numbered 00-09 among `notebooks` (by the two digits a chapter's name starts with)."""
    return [p for p in notebooks if re.match(r"0\d_", p.name)]


def find_notebooks(folder: Path | None = None) -> list[Path]:
    """The chapter notebooks (checkpoints excluded), sorted by name."""
    folder = folder or NOTEBOOKS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _sanitize_args() -> list[str]:
    found = sorted(NOTEBOOKS.glob("*sanitize*.cfg")) + sorted((ROOT / "tests").glob("*sanitize*.cfg"))
    return ["--nbval-sanitize-with", str(found[0])] if found else []


def run_nbval(target_path: Path | list[Path], junit: Path, root: Path = ROOT) -> tuple[float, int, str]:
    """Run nbval on a folder (or on some notebooks) with `root`'s toolkit: (wall seconds, pytest exit code, last
    lines of its output)."""
    targets = target_path if isinstance(target_path, list) else [target_path]
    # -n 0: one process, as the recorded figures were taken (pyproject.toml spreads the suite over cores)
    cmd = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-q", "-p", "no:cacheprovider", "-n", "0",
           f"--junitxml={junit}", *_sanitize_args(), *map(str, targets)]
    env = {**os.environ, "PYTHONWARNINGS": os.environ.get("PYTHONWARNINGS", "")}
    if root != ROOT:  # the kernels must import that tree's toolkit, not the one installed from this tree
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=1800, env=env)
    wall = time.perf_counter() - t0
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
    return wall, proc.returncode, tail


def per_notebook(junit: Path) -> dict[str, float]:
    """Seconds per notebook from a JUnit report (cells summed, kernel start included)."""
    times: dict[str, float] = defaultdict(float)
    if not junit.exists():
        return {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("classname") or case.get("file") or "?"
        times[name.rsplit(".ipynb", 1)[0].rsplit(".", 1)[-1] + ".ipynb"] += float(case.get("time") or 0)
    return dict(times)


MODULES_CELL = "import json as _json, sys as _sys\nprint(_json.dumps(sorted(_sys.modules)))"

IMPORTS_CELL = """# Only the modules this chapter's kernel had imported when its last cell ended (bench/notebooks.py, row 5)
import importlib, importlib.abc, sys
NAMES = {names!r}
ALLOWED = set(NAMES)


class OnlyThese(importlib.abc.MetaPathFinder):
    \"\"\"No other module: an optional import the chapter did not make fails here too.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name not in ALLOWED:
            raise ModuleNotFoundError(name)
        return None


sys.meta_path.insert(0, OnlyThese())
for name in NAMES:
    try:
        importlib.import_module(name)
    except Exception:
        pass
sys.meta_path.pop(0)
"""


def modules_of(notebook: Path, cwd: Path | None = None) -> list[str]:
    """The names in sys.modules of a kernel that has just run `notebook` (all its cells, in `cwd`)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(MODULES_CELL))
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd or notebook.parent)}})
    client.execute(stderr=subprocess.DEVNULL)  # not the kernel's start-up warnings in the bench's output
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    return json.loads(text.strip().splitlines()[-1])


def imports_notebook(names: list[str]) -> str:
    """A notebook whose one cell imports `names` (in order) and nothing else."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata.update(json.loads(EMPTY_NOTEBOOK)["metadata"])
    nb.cells.append(nbformat.v4.new_code_cell(IMPORTS_CELL.format(names=names)))
    return nbformat.writes(nb)


def make_import_notebooks(folder: Path, notebooks: list[Path]) -> dict[str, int]:
    """For each chapter, a notebook importing what the chapter's kernel imported beyond an empty kernel's;
    returns the number of modules per chapter."""
    empty = folder / "baseline.ipynb"
    empty.write_text(EMPTY_NOTEBOOK, encoding="utf-8")
    baseline = set(modules_of(empty, cwd=NOTEBOOKS))
    empty.unlink()
    counts = {}
    for path in notebooks:
        names = [n for n in modules_of(path, cwd=NOTEBOOKS) if n not in baseline]
        (folder / path.name).write_text(imports_notebook(names), encoding="utf-8")
        counts[path.name] = len(names)
    return counts


def make_empty_notebooks(folder: Path, count: int) -> None:
    for i in range(count):
        (folder / f"empty_{i:02d}.ipynb").write_text(EMPTY_NOTEBOOK, encoding="utf-8")


def run(quick: bool = False) -> dict:
    """Measure row 5; returns the row dict (see _stats.row)."""
    notebooks = find_notebooks()
    ten = first_ten(notebooks)
    ten = ten if notebooks and len(ten) < len(notebooks) else []  # only when it is another view of the suite
    before = Path(os.environ["BENCH_BEFORE"]).resolve() if os.environ.get("BENCH_BEFORE") else None
    if before is not None and not find_notebooks(before / "notebooks"):
        raise ValueError(f"BENCH_BEFORE={before} has no notebooks/ with notebooks in it")
    rounds = 1 if quick else (3 if before else 2)
    count = max(len(notebooks), 1)
    with tempfile.TemporaryDirectory(prefix="bench-nb-") as tmp:
        floor_dir, floor_ten_dir, imports_dir = Path(tmp) / "empty", Path(tmp) / "empty_ten", Path(tmp) / "imports"
        floor_dir.mkdir()
        make_empty_notebooks(floor_dir, count)
        imports_dir.mkdir()
        module_counts = make_import_notebooks(imports_dir, notebooks) if notebooks else {}
        if ten:
            floor_ten_dir.mkdir()
            make_empty_notebooks(floor_ten_dir, len(ten))
        walls: dict[str, list[float]] = defaultdict(list)
        per_nb, failures = defaultdict(list), []
        contenders = ["floor", "suite"] + (["imports"] if notebooks else []) + \
            (["before"] if before and notebooks else []) + (["floor_00_09", "suite_00_09"] if ten else [])
        targets_of = {"floor": floor_dir, "suite": NOTEBOOKS, "imports": imports_dir, "floor_00_09": floor_ten_dir,
                      "suite_00_09": ten}
        for r in range(rounds):
            for what in rotation(contenders, r):
                if what == "suite" and not notebooks:
                    continue
                junit = Path(tmp) / f"{what}_{r}.xml"
                if what == "before":
                    wall, code, tail = run_nbval(before / "notebooks", junit, root=before)
                else:
                    wall, code, tail = run_nbval(targets_of[what], junit)
                if code != 0:
                    failures.append({"what": what, "exit_code": code, "tail": tail})
                walls[what].append(wall)
                if what in ("suite", "imports"):
                    for name, secs in per_notebook(junit).items():
                        per_nb[(what, name)].append(secs)
    floors, suites, befores = walls["floor"], walls["suite"], walls["before"]
    floor = summarize(floors)
    lines = [line(f"下限：{count} 个空笔记本", f"floor: {count} empty notebook(s)", floor["median"], "s",
                  floor["spread"])]
    targets = []
    data = {"notebooks": [p.name for p in notebooks], "floor_s": floor, "rounds": rounds, "failures": failures}
    if not notebooks:
        note = "还没有笔记本（notebooks/ 中没有 .ipynb）：只测了启动内核并运行一个空笔记本的下限"
        return row(KEY, TITLE, EN, lines=lines, status="skipped", note=note, data=data)
    suite = summarize(suites)
    ratio = summarize(per_round(suites, floors, lambda a, b: a / b))
    lines += [line(f"nbval 全部 {len(notebooks)} 个笔记本", f"nbval, all {len(notebooks)} notebooks", suite["median"],
                   "s", suite["spread"]),
              line("比值 套件 / 下限", "ratio suite / floor", ratio["median"], "×", ratio["spread"])]
    imports = summarize(walls["imports"])
    imports_ratio = summarize(per_round(walls["imports"], floors, lambda a, b: a / b))
    lessons_ratio = summarize(per_round(suites, walls["imports"], lambda a, b: a / b))
    lines += [line(f"导入下限：{len(notebooks)} 个只导入各章内核所导入模块的笔记本",
                   f"import floor: {len(notebooks)} notebooks that only import what each chapter's kernel imported",
                   imports["median"], "s", imports["spread"]),
              line("比值 导入下限 / 下限（只是导入就花的）", "ratio import floor / floor (what the imports alone cost)",
                   imports_ratio["median"], "×", imports_ratio["spread"]),
              line("比值 套件 / 导入下限（课程单元格本身花的）", "ratio suite / import floor (what the lessons' cells cost)",
                   lessons_ratio["median"], "×", lessons_ratio["spread"])]
    data.update({"imports_s": imports, "imports_over_floor": imports_ratio, "suite_over_imports": lessons_ratio,
                 "modules_imported": module_counts})
    if ten:
        floor_ten, suite_ten = summarize(walls["floor_00_09"]), summarize(walls["suite_00_09"])
        ratio_ten = summarize(per_round(walls["suite_00_09"], walls["floor_00_09"], lambda a, b: a / b))
        lines += [line(f"下限：{len(ten)} 个空笔记本（对照第 00–09 章）", f"floor: {len(ten)} empty notebook(s), for chapters 00–09",
                       floor_ten["median"], "s", floor_ten["spread"]),
                  line(f"nbval 第 00–09 章（{len(ten)} 个笔记本）", f"nbval, chapters 00–09 ({len(ten)} notebooks)",
                       suite_ten["median"], "s", suite_ten["spread"]),
                  line("比值 第 00–09 章 / 其下限（与以前记录的十个笔记本同口径）",
                       "ratio chapters 00–09 / their floor (like for like with the ten-notebook figures recorded before)",
                       ratio_ten["median"], "×", ratio_ten["spread"])]
        data.update({"chapters_00_09": [p.name for p in ten], "floor_00_09_s": floor_ten,
                     "suite_00_09_s": suite_ten, "ratio_00_09": ratio_ten})
    if befores:
        old = summarize(befores)
        old_ratio = summarize(per_round(befores, floors, lambda a, b: a / b))
        change = summarize(per_round(suites, befores, lambda a, b: a / b))
        lines += [line(f"改动前的代码（{before.name}）：nbval 全部笔记本", f"the code before ({before.name}): nbval, all notebooks",
                       old["median"], "s", old["spread"]),
                  line("改动前 比值 套件 / 下限", "before: ratio suite / floor", old_ratio["median"], "×", old_ratio["spread"]),
                  line("比值 套件 / 改动前的套件", "ratio suite / the suite before", change["median"], "×", change["spread"])]
        data.update({"before": str(before), "before_s": old, "before_ratio": old_ratio, "suite_over_before": change})
    for (what, name), secs in sorted(per_nb.items()):
        if what == "suite":
            s = summarize(secs)
            lines.append(line(f"  {name}", f"  {name}", s["median"], "s"))
    targets.append(target(f"全部 {len(notebooks)} 个笔记本：套件 / 下限 ≤ 2", f"all {len(notebooks)} notebooks: suite / floor ≤ 2",
                          ratio["median"], "<=", 2.0, "×"))
    note = f"{rounds} 轮，{'、'.join(contenders)} 轮流先跑；每个笔记本的时间含其内核启动（JUnit 报告）"
    if failures:
        note += f"；有 {len(failures)} 次运行未全部通过（见 JSON 中 failures）"
    data.update({"suite_s": suite, "ratio": ratio,
                 "per_notebook_s": {k: summarize(v) for (what, k), v in per_nb.items() if what == "suite"},
                 "imports_per_notebook_s": {k: summarize(v) for (what, k), v in per_nb.items() if what == "imports"}})
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note, data=data)
