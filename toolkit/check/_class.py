"""Many notebooks at once: the progress table of one folder and a teacher's class report.

Each notebook is checked by its own `python -m toolkit.check --json NB` process
(its own referee, loader and worker, the same limits as for one notebook),
`jobs` at a time. A notebook that hangs past its time or crashes its checker
becomes a row that says so; the report is never stopped by one student.

    python -m toolkit.check --class CLASS_DIR [--html report.html] [--csv report.csv] [--jobs 2]

CLASS_DIR holds one folder per student, each with exercise notebooks
(exNN_name.ipynb, anywhere inside it; copies such as …-Copy1.ipynb are not
exercises). The report: a table student × exercise × score, then the checks
most often failed by the students who worked on that exercise (what to teach
next), in the terminal, as one self-contained HTML page and as CSV.
"""
from __future__ import annotations

import concurrent.futures
import csv
import hashlib
import hmac
import html
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Sequence

from ._catalogue import get_exercise
from ._core import _pad, _width, visible
from ._player import TIME_LIMIT, not_run
from ._sandbox import problem
from .notebook import NOTEBOOK_NAME  # noqa: F401  (test_linear_time lists the pattern under this module)
from .notebook import CELL_TIMEOUT, NotebookRun, canonical_name, exercise_number, skipped_copies

NOTEBOOK_TIMEOUT = 600.0  # real seconds for one notebook, cells and checks together
STATUS = {"done": "✔ 完成", "in_progress": "✘ 进行中", "not_started": "○ 未开始", "could_not_run": "⚠ 无法运行",
          "unverified": "⚠ 无法验证"}


class CheckerTampered(Exception):
    """The checker's own files changed while these notebooks were being checked: the report stops."""

    def __init__(self, paths: list[Path], changed: list[str]) -> None:
        super().__init__(f"{', '.join(str(p) for p in paths)}: {', '.join(changed)}")
        self.paths, self.changed = paths, changed


def checker_files() -> dict[str, str]:
    """sha256 of every source file of the checker (the toolkit package, which it runs on), by relative path."""
    root = Path(__file__).resolve().parents[1]
    return {str(path.relative_to(root.parent)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}


def _changed(before: dict[str, str]) -> list[str]:
    after = checker_files()
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def check_many(paths: Sequence[Path], *, jobs: int = 2, time_limit: float = TIME_LIMIT,
               cell_timeout: float = CELL_TIMEOUT, notebook_timeout: float = NOTEBOOK_TIMEOUT,
               progress: Callable[[Path, NotebookRun], None] | None = None) -> list[tuple[NotebookRun, float]]:
    """Check every notebook, `jobs` in parallel; (run, seconds) per notebook, in the order given.

    The checker's own source files are hashed before and after each notebook: when one changed (a student's
    code rewrote the checker, which only a system without the workers' read-only namespaces allows), every
    run still going is stopped and CheckerTampered names the notebooks that were running."""
    baseline = checker_files()
    lock = threading.Lock()
    running: dict[Path, subprocess.Popen] = {}
    suspects: list[Path] = []
    tampered: list[str] = []

    def one(path: Path) -> tuple[NotebookRun, float]:
        began = time.perf_counter()
        with lock:
            if tampered:
                return NotebookRun(path, not_run(get_exercise(exercise_number(path)), (), "已停止")), 0.0
            running[path] = None  # type: ignore[assignment]
            overlapping = list(running)
        run = _check_apart(path, time_limit, cell_timeout, notebook_timeout, running)
        with lock:
            running.pop(path, None)
            changed = [] if tampered else _changed(baseline)
            if changed:
                tampered.extend(changed)
                suspects.extend(p for p in overlapping + list(running) if p not in suspects)
                for proc in running.values():
                    if proc is not None:
                        proc.kill()
        if progress and not tampered:
            progress(path, run)
        return run, time.perf_counter() - began

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = list(pool.map(one, paths))
    if tampered:
        raise CheckerTampered(suspects, tampered)
    return done


def _check_apart(path: Path, time_limit: float, cell_timeout: float, notebook_timeout: float,
                 running: dict | None = None) -> NotebookRun:
    """One notebook in a checker process of its own, whose answer must be exact and authenticated.

    A fresh random key goes to the checker on its stdin before any student code runs (the checker reads it
    and closes stdin, so no worker inherits it); its answer is one line of JSON and one line with that
    line's HMAC-SHA256 under the key. An exit code other than 0/1, a missing or wrong MAC, extra output, an
    answer about another notebook or a score its exit code contradicts: a row that says the checker was
    ended or its answer could not be verified, never a pass."""
    exercise = get_exercise(exercise_number(path))
    command = [sys.executable, "-m", "toolkit.check", "--json", "--time-limit", str(time_limit),
               "--cell-timeout", str(cell_timeout), str(path)]
    env = dict(os.environ, TOOLKIT_DOTENV="none", PYTHONIOENCODING="utf-8")
    key = secrets.token_hex(32)
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if running is not None:
        running[path] = proc
    try:
        out, _ = proc.communicate((key + "\n").encode("ascii"), timeout=notebook_timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return NotebookRun(path, not_run(exercise, exercise.checks, f"超过 {notebook_timeout:g} 秒还没有检查完（已停止）"))
    why = _unverified(out, proc.returncode, key, path)
    if why:
        return NotebookRun(path, not_run(exercise, exercise.checks, f"{UNVERIFIED}（{why}）"), unverified=True)
    return NotebookRun.from_dict(json.loads(out.split(b"\n", 1)[0].decode("utf-8")))


UNVERIFIED = "检查器被中断或结果无法验证"


def sign(key: str, payload: bytes) -> str:
    return hmac.new(key.encode("ascii"), payload, hashlib.sha256).hexdigest()


def _unverified(out: bytes, code: int, key: str, path: Path) -> str:
    """Why a checker's answer cannot be trusted ("" when it can)."""
    if code not in (0, 1):
        return f"退出码 {code}"
    lines = out.split(b"\n")
    if len(lines) != 3 or lines[2] != b"":
        return "输出的格式不对"
    payload, mac = lines[0], lines[1].decode("ascii", "replace")
    if not hmac.compare_digest(mac, sign(key, payload)):
        return "签名不对"
    try:
        run = NotebookRun.from_dict(json.loads(payload.decode("utf-8")))
    except (ValueError, KeyError, TypeError):
        return "结果读不了"
    if Path(run.path) != path:
        return "结果属于别的 notebook"
    if (code == 0) != run.report.ok:
        return f"退出码 {code} 与得分 {run.report.passed}/{run.report.total} 不符"
    return ""


# --- a class ------------------------------------------------------------------------------------

def class_notebooks(folder: Path, skipped: dict[str, list[str]] | None = None) -> dict[str, dict[str, Path]]:
    """student -> exercise number -> notebook, from one folder per student (the shallowest one wins). Skipped, each
    with a note in `skipped[student]`: the copies (…-Copy1, …_v2) and a notebook that is not the student's own file
    (a symbolic or hard link, or a path that leads out of their folder: a solution, a classmate's work)."""
    found: dict[str, dict[str, Path]] = {}
    for student in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        mine: dict[str, Path] = {}
        every = [p for p in sorted(student.rglob("*.ipynb"), key=lambda p: (len(p.parts), str(p)))
                 if ".ipynb_checkpoints" not in p.parts]
        notes = []
        for path in every:
            why = _not_theirs(path, folder.resolve() / student.name)
            if why and canonical_name(path.name):
                notes.append(f"跳过了 {path.relative_to(student)}：{why}，不算这名学生的作业")
            elif canonical_name(path.name):
                mine.setdefault(exercise_number(path), path)
        found[student.name] = mine
        if skipped is not None:
            skipped[student.name] = notes + skipped_copies(every, list(mine.values()))
    return found


def _not_theirs(path: Path, own: Path) -> str:
    """Why `path` is not the student's own notebook under `own` ("" when it is)."""
    try:
        if path.is_symlink():
            return "它是符号链接"
        if not path.resolve().is_relative_to(own):
            return "它的路径通向学生文件夹之外"
        if path.stat().st_nlink > 1:
            return "它是硬链接（和别处的某个文件是同一份）"
    except OSError as exc:
        return f"读不了它（{type(exc).__name__}）"
    return ""


class ClassReport:
    """The runs of a class: rows, the most-failed checks, and the three ways of showing them."""

    def __init__(self, runs: dict[str, dict[str, NotebookRun]], seconds: float = 0.0, isolation: str = "",
                 skipped: dict[str, list[str]] | None = None) -> None:
        self.runs = runs
        self.skipped = skipped or {}  # student -> notes on the exercise notebooks skipped (copies, links)
        self.seconds = seconds
        self.isolation = isolation  # why the students' code could not be isolated here ("" when it was)
        self.numbers = sorted({n for mine in runs.values() for n in mine})

    def cell(self, student: str, number: str) -> tuple[str, str]:
        """(score, status mark) of one student's exercise; ("—", "") when the notebook is not there."""
        run = self.runs[student].get(number)
        if run is None:
            return "—", ""
        if run.status in ("could_not_run", "unverified"):
            return "-", STATUS[run.status]
        return f"{run.report.passed}/{run.report.total}", STATUS[run.status]

    def most_failed(self, top: int = 10) -> list[dict]:
        """The checks failed most often among the students who started that exercise."""
        failed: Counter = Counter()
        tried: Counter = Counter()
        reasons: dict[tuple[str, str], Counter] = defaultdict(Counter)
        titles: dict[tuple[str, str], str] = {}
        for mine in self.runs.values():
            for number, run in mine.items():
                if not run.report.started:
                    continue
                tried[number] += 1
                for r in run.report.results:
                    if r.passed or r.kind in ("todo", "not_run", "error"):
                        continue
                    key = (number, r.id)
                    failed[key] += 1
                    titles[key] = r.title
                    reasons[key][r.reason[:90]] += 1
        order = sorted(failed, key=lambda k: (-failed[k], k))
        return [{"exercise": k[0], "check": k[1], "title": titles[k], "failed": failed[k], "tried": tried[k[0]],
                 "reason": reasons[k].most_common(1)[0][0]} for k in order[:top]]

    def problems(self) -> list[str]:
        """Notebooks that could not be checked, and checks that failed by the checker's own fault."""
        out = []
        for student, mine in self.runs.items():
            for number, run in sorted(mine.items()):
                if run.report.problem:
                    out.append(f"{student} 练习 {number}：{run.report.problem}")
                out += [f"{student} 练习 {number} · {r.id}：{r.reason}" for r in run.report.results if r.kind == "error"]
            out += [f"{student}：{note}" for note in self.skipped.get(student, [])]
        return out

    # --- output -------------------------------------------------------------------------------------
    def render(self) -> str:
        students = list(self.runs)
        names = [f"练习 {n}" for n in self.numbers]
        first = max([_width("学生")] + [_width(s) for s in students])
        widths = [max(_width(name), 13) for name in names]
        lines = [f"班级报告：{len(students)} 名学生 × {len(self.numbers)} 个练习（用时 {self.seconds:.0f} 秒）"]
        if self.isolation:
            lines.append(f"⚠ {self.isolation_note()}")
        lines += ["",
                 "  ".join([_pad("学生", first)] + [_pad(n, w) for n, w in zip(names, widths)])]
        lines.append("─" * (first + sum(widths) + 2 * len(widths)))
        for student in students:
            row = [_pad(student, first)]
            for number, w in zip(self.numbers, widths):
                score, mark = self.cell(student, number)
                row.append(_pad(f"{score} {mark}".strip(), w))
            lines.append("  ".join(row).rstrip())
        lines += ["", "最常未通过的检查（只算做了这个练习的学生）："]
        for n, item in enumerate(self.most_failed(), 1):
            lines.append(f"  {n}. 练习 {item['exercise']} · {item['title']}：{item['failed']}/{item['tried']} 名学生未通过")
            lines.append(f"     常见原因：{item['reason']}")
        if not self.most_failed():
            lines.append("  （没有）")
        problems = self.problems()
        if problems:
            lines += ["", "⚠ 没能检查的 notebook、跳过的副本和链接、检查器自己的错误："] + [f"  {p}" for p in problems]
        return "\n".join(visible(line) for line in lines)

    def isolation_note(self) -> str:
        return (f"本机无法隔离学生代码：{self.isolation}。学生的代码和检查器在同一个用户下运行，能看到检查器的进程和文件；"
                "检查器的文件在每个学生前后都核对过，结果的签名也核对过")

    def to_csv(self, path: Path) -> None:
        with open(path, "w", encoding="utf-8-sig", newline="") as f:
            out = csv.writer(f)
            out.writerow(["student", "exercise", "notebook", "status", "passed", "total", "failed_checks",
                          "problem", "notes"])
            for student, mine in self.runs.items():
                for number in self.numbers:
                    run = mine.get(number)
                    if run is None:
                        out.writerow([student, number, "", "missing", "", "", "", "", ""])
                        continue
                    out.writerow([student, number, run.path.name, run.status, run.report.passed, run.report.total,
                                  ";".join(run.report.failed_ids()), run.report.problem, " | ".join(run.notes)])

    def to_html(self, path: Path) -> None:
        e = html.escape
        head = "".join(f"<th>练习 {e(n)}</th>" for n in self.numbers)
        rows = []
        for student in self.runs:
            cells = []
            for number in self.numbers:
                score, mark = self.cell(student, number)
                kind = {"✔": "done", "✘": "doing", "○": "todo", "⚠": "broken"}.get(mark[:1], "missing")
                run = self.runs[student].get(number)
                tip = e(run.report.problem or "; ".join(run.report.failed_ids())) if run else ""
                cells.append(f'<td class="{kind}" title="{tip}">{e(score)} {e(mark)}</td>')
            rows.append(f"<tr><th>{e(student)}</th>{''.join(cells)}</tr>")
        failed = "".join(f"<li><b>练习 {e(i['exercise'])} · {e(i['title'])}</b>：{i['failed']}/{i['tried']} 名学生未通过"
                         f"<br><small>常见原因：{e(i['reason'])}</small></li>" for i in self.most_failed())
        problems = "".join(f"<li>{e(p)}</li>" for p in self.problems())
        page = f"""<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>班级报告</title>
<style>
body {{ font-family: system-ui, "PingFang SC", "Microsoft YaHei", sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }} th, td {{ border: 1px solid #ccc; padding: .3em .7em; text-align: left; }}
td.done {{ background: #e3f4e1; }} td.doing {{ background: #fdf1d6; }} td.todo {{ background: #f2f2f2; }}
td.broken {{ background: #f9dcdc; }} td.missing {{ color: #999; }} small {{ color: #555; }}
</style></head><body>
<h1>班级报告</h1>
<p>{len(self.runs)} 名学生 × {len(self.numbers)} 个练习；用时 {self.seconds:.0f} 秒。✔ 完成，✘ 进行中，○ 未开始，⚠ 无法运行或无法验证。</p>
{f"<p><b>⚠ {e(self.isolation_note())}</b></p>" if self.isolation else ""}
<table><tr><th>学生</th>{head}</tr>
{"".join(rows)}
</table>
<h2>最常未通过的检查（只算做了这个练习的学生）</h2>
<ol>{failed or "<li>没有</li>"}</ol>
{f"<h2>⚠ 没能检查的 notebook、跳过的副本和链接、检查器自己的错误</h2><ul>{problems}</ul>" if problems else ""}
</body></html>
"""
        path.write_text(page, encoding="utf-8")


def check_class(folder: Path, *, jobs: int = 2, progress: Callable[[Path, NotebookRun], None] | None = None,
                **limits: float) -> ClassReport:
    """Check every student's notebooks under `folder` (one folder per student)."""
    skipped: dict[str, list[str]] = {}
    found = class_notebooks(folder, skipped)
    work = [(student, number, path) for student, mine in found.items() for number, path in sorted(mine.items())]
    began = time.perf_counter()
    done = check_many([path for _, _, path in work], jobs=jobs, progress=progress, **limits)
    runs: dict[str, dict[str, NotebookRun]] = {student: {} for student in found}
    for (student, number, _), (run, _) in zip(work, done):
        runs[student][number] = run
    return ClassReport(runs, time.perf_counter() - began, isolation=problem(), skipped=skipped)
