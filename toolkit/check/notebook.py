"""Running an exercise notebook for the checker: execute it in a kernel, then run its checks in that kernel.

The student's function lives in the kernel, so the checks run there too: after
the notebook's own cells, one more cell calls `kernel_report` and prints the
Report as JSON after a marker line, which is read back here.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import get_exercise
from ._core import CheckResult, Report

MARKER = "<<<TOOLKIT_CHECK_REPORT>>>"
CELL_TIMEOUT = 600  # seconds; every wait in an exercise is simulated, this only stops a runaway cell
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class NotebookRun:
    """A checked notebook: the report, and the code cells that raised (number, one-line error)."""

    path: Path
    report: Report
    cell_errors: list[tuple[int, str]] = field(default_factory=list)


NOTEBOOK_NAME = re.compile(r"(?:ex|sol)(\d\d)_[a-z0-9_]+\.ipynb")


def exercise_number(path: Path) -> str:
    """The exercise number from a file name like ex02_smart_truncate.ipynb (or sol02_…); ValueError otherwise."""
    match = NOTEBOOK_NAME.fullmatch(path.name)
    if not match:
        raise ValueError(f"文件名应是 ex + 两位练习编号 + 名称（例如 ex02_smart_truncate.ipynb）：{path.name}")
    return match.group(1)


def exercise_notebooks(folder: Path) -> list[Path]:
    """The exercise (or solution) notebooks in `folder`, by number; copies such as ex02_…-Copy1.ipynb are not."""
    return sorted(p for p in folder.glob("*.ipynb") if NOTEBOOK_NAME.fullmatch(p.name))


def kernel_report(namespace: dict, number: str) -> dict:
    """Inside the kernel: run the exercise's checks on the student's object from `namespace`."""
    from . import run_checks

    exercise = get_exercise(number)
    obj = namespace.get(exercise.function)
    if obj is None:
        reason = f"notebook 里没有找到 {exercise.function}（函数或类的名字不要改）"
        return Report(exercise.number, exercise.title, exercise.function,
                      [CheckResult(c.id, c.title, False, reason, c.hint) for c in exercise.checks]).to_dict()
    return run_checks(obj, exercise.number).to_dict()


def _kernel_env() -> dict:
    env = dict(os.environ)
    env["TOOLKIT_DOTENV"] = "none"  # the checker never reads a .env: the offline model answers
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("MPLBACKEND", None)
    return env


def run_notebook(path: str | Path) -> NotebookRun:
    """Execute the notebook at `path` (nbclient, a fresh python3 kernel) and check the student's work."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    number = exercise_number(path)
    exercise = get_exercise(number)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    probe = nbformat.v4.new_code_cell(
        "import json as _tc_json\n"
        "from toolkit.check.notebook import kernel_report as _tc_report\n"
        f"print({MARKER!r} + _tc_json.dumps(_tc_report(globals(), {number!r}), ensure_ascii=False))")
    with client.setup_kernel(env=_kernel_env(), stderr=subprocess.DEVNULL):  # no kernel log lines
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
        nb.cells.append(probe)
        client.execute_cell(probe, len(nb.cells) - 1)
    errors = []
    code_number = 0
    for cell in nb.cells[:-1]:
        if cell.cell_type != "code":
            continue
        code_number += 1
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append((code_number, f"{out.get('ename')}: {str(out.get('evalue'))[:200]}"))
    report = None
    for out in probe.get("outputs", []):
        text = out.get("text", "") if out.get("output_type") == "stream" else ""
        for line in text.splitlines():
            if line.startswith(MARKER):
                report = Report.from_dict(json.loads(line[len(MARKER):]))
    if report is None:
        problem = next((f"{o.get('ename')}: {o.get('evalue')}" for o in probe.get("outputs", [])
                        if o.get("output_type") == "error"), "检查没有输出结果")
        report = Report(exercise.number, exercise.title, exercise.function,
                        [CheckResult(c.id, c.title, False, f"检查无法运行：{problem}", c.hint)
                         for c in exercise.checks])
    return NotebookRun(path, report, errors)
