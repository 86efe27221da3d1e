"""Checking an exercise notebook from a shell: run its cells in a loader, then judge the object in a fresh worker.

    loader (a worker running the cells in an IPython shell, in the notebook's folder)
        cells before the check cell → export the student's object (cloudpickle bytes) → the rest of the cells
    referee (this process) → judge(bytes) in a fresh worker where no cell ran

The check cell itself is not run (in the loader `check()` only returns): the
object it names is exported at that point, so a later cell that hangs or kills
the process cannot stop the grading. Every cell has a time limit; a cell that
hangs or ends the process, a syntax error, a missing function: each is one
Chinese line, and none is a traceback.
"""
from __future__ import annotations

import base64
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._catalogue import get_exercise
from ._core import Crashed, Hang, Report
from ._errors import why_it_ended
from ._player import TIME_LIMIT, Pool, judge, not_run

CELL_TIMEOUT = 60.0  # real seconds per cell; the exercises' cells take well under one
NOTEBOOK_NAME = re.compile(r"(?:ex|sol)(\d\d)_[a-z0-9_]+\.ipynb")
CHECK_CELL = re.compile(r"^[^\S\n]*check\(", re.M)  # [^\S\n]: the indent stays on its line (linear on blank lines)


@dataclass
class NotebookRun:
    """A checked notebook: its report (with `problem` when no check could run) and notes on the cells."""

    path: Path
    report: Report
    notes: list[str] = field(default_factory=list)
    unverified: bool = False  # its checker was ended or its answer could not be verified (class report): never a pass

    @property
    def status(self) -> str:
        """done, in_progress, not_started, could_not_run or unverified."""
        if self.unverified:
            return "unverified"
        if self.report.problem:
            return "could_not_run"
        if self.report.ok:
            return "done"
        return "in_progress" if self.report.started else "not_started"

    def to_dict(self) -> dict:
        return {"path": str(self.path), "report": self.report.to_dict(), "notes": self.notes, "status": self.status}

    @classmethod
    def from_dict(cls, data: dict) -> "NotebookRun":
        return cls(Path(data["path"]), Report.from_dict(data["report"]), list(data["notes"]))


def exercise_number(path: Path) -> str:
    """The exercise number from a file name like ex02_smart_truncate.ipynb (or sol02_…); ValueError otherwise."""
    match = NOTEBOOK_NAME.fullmatch(path.name)
    if not match:
        raise ValueError(f"文件名应是 ex + 两位练习编号 + 名称（例如 ex02_smart_truncate.ipynb）：{path.name}")
    return match.group(1)


def canonical_name(name: str) -> bool:
    """True for an exercise's own file name (ex02_smart_truncate.ipynb, or sol02_…): not for a copy."""
    if not NOTEBOOK_NAME.fullmatch(name):
        return False
    try:
        stem = get_exercise(name[name.index("_") - 2:name.index("_")]).stem
    except ValueError:
        return False
    return name in (f"ex{stem}.ipynb", f"sol{stem}.ipynb")


def looks_like_a_copy(name: str) -> bool:
    """An exercise notebook's copy: ex07_…_v2.ipynb, ex02_…-Copy1.ipynb, ex03_retry (1).ipynb."""
    for prefix in ("ex", "sol"):
        number = name[len(prefix):len(prefix) + 2]
        if name.startswith(prefix) and number.isdigit() and name[len(prefix) + 2:len(prefix) + 3] == "_":
            return name.endswith(".ipynb") and not canonical_name(name)
    return False


def exercise_notebooks(folder: Path) -> list[Path]:
    """The exercise (or solution) notebooks in `folder`, by number; copies (…-Copy1, …_v2) are not."""
    return sorted(p for p in folder.glob("*.ipynb") if canonical_name(p.name))


def skipped_copies(paths: list[Path], checked: list[Path]) -> list[str]:
    """One note per copy of an exercise notebook that is not checked, saying which file is."""
    names = {exercise_number_of(p): p.name for p in checked}
    notes = []
    for path in paths:
        if not looks_like_a_copy(path.name):
            continue
        number = exercise_number_of(path)
        kept = names.get(number)
        notes.append(f"跳过了副本 {path.name}：只检查 {kept}" if kept else
                     f"跳过了副本 {path.name}：没有找到 {exercise_file(number)}，副本不算，请把代码放回这个文件")
    return notes


def exercise_number_of(path: Path) -> str:
    """The two digits after ex / sol in a notebook's (or a copy's) name."""
    prefix = 3 if path.name.startswith("sol") else 2
    return path.name[prefix:prefix + 2]


def exercise_file(number: str) -> str:
    try:
        return f"ex{get_exercise(number).stem}.ipynb"
    except ValueError:
        return f"ex{number}_….ipynb"


def code_cells(path: Path) -> list[str]:
    """The sources of the notebook's code cells, read as plain JSON (nbformat's import costs seconds here)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    sources = [cell["source"] for cell in nb["cells"] if cell["cell_type"] == "code"]
    return [s if isinstance(s, str) else "".join(s) for s in sources]


def _cell_note(n: int, reply: dict) -> str:
    error = reply["error"]
    if "line" in error:
        where = f"第 {error['line']} 行" + (f"「{error['text']}」" if error.get("text") else "")
        return f"第 {n} 个代码单元格有语法错误（{where}）：{error['message']}"
    return f"第 {n} 个代码单元格运行出错（{error['names'][0]}: {error['message'][:160]}）"


def run_notebook(path: str | Path, *, time_limit: float = TIME_LIMIT, cell_timeout: float = CELL_TIMEOUT,
                 pool: Pool | None = None) -> NotebookRun:
    """Run the notebook's cells in a loader and judge its exercise's object; never raises for the student's work.

    The cells after the check cell (the plug-in section) run while the checks run. When a check
    found that the object hangs or kills its process, those cells (which call it) are stopped.
    ValueError only for a path that is not an exercise notebook (its name).
    """
    path = Path(path)
    exercise = get_exercise(exercise_number(path))
    pool = pool or Pool()
    try:
        cells = list(enumerate(code_cells(path), 1))
    except (OSError, ValueError, KeyError, TypeError) as exc:  # not JSON, not a notebook: one problem
        return NotebookRun(path, not_run(exercise, exercise.checks, f"读不了这个 notebook（{type(exc).__name__}）"))
    at = next((i for i, (_, source) in enumerate(cells) if CHECK_CELL.search(source)), len(cells))
    loader = pool.take()
    pool.prefetch()  # the player starts while the cells run
    notes: list[str] = []
    try:
        alive = _run_cells(loader, [("chdir", str(path.parent.resolve()))], cells[:at], notes, cell_timeout)
        if not alive:
            problem = f"notebook 没有运行到检查单元格：{notes[-1]}" if notes else "notebook 没有运行完"
            return NotebookRun(path, not_run(exercise, exercise.checks, problem), notes[:-1])
        blob, problem = _export(loader, exercise.function, notes, cell_timeout)
        if blob is None:
            return NotebookRun(path, not_run(exercise, exercise.checks, problem),
                               [n for n in notes if n not in problem])
        later: list[str] = []
        rest = threading.Thread(target=_run_cells, args=(loader, [], cells[at + 1:], later, cell_timeout), daemon=True)
        rest.start()
        try:
            report = judge(exercise, blob, time_limit=time_limit, pool=pool)
        except BaseException:
            loader.end()  # the thread's ask() then ends with Crashed; the pipe is closed below, by this thread
            rest.join()
            raise
        if any(r.kind in ("hang", "crash") for r in report.results) and rest.is_alive():
            loader.stopped = "你的函数在检查里没有正常返回，后面调用它的单元格已停止运行"
            loader.end()
        rest.join()
        return NotebookRun(path, report, notes + later)
    finally:
        loader.kill()


def _run_cells(loader: Any, setup: list[tuple], cells: list[tuple[int, str]], notes: list[str],
               timeout: float) -> bool:
    """Run the cells in the loader, one note per cell that failed; False once the loader is gone."""
    try:
        for request in setup:
            loader.ask(request, timeout)
    except (Hang, Crashed) as exc:
        notes.append(f"检查进程没能启动（{exc}）")
        return False
    for n, source in cells:
        try:
            reply = loader.ask(("cell", source), timeout)
        except Hang:
            notes.append(f"第 {n} 个代码单元格超过 {timeout:g} 秒没有结束：是不是死循环？（已停止运行）")
            return False
        except Crashed as exc:
            notes.append(f"第 {n} 个代码单元格：{loader.stopped}" if loader.stopped else
                         f"第 {n} 个代码单元格让 Python 进程退出了（退出码 {exc.code}）：{why_it_ended(exc.code)}")
            return False
        if "error" in reply:
            notes.append(_cell_note(n, reply))
    return True


def _export(loader, name: str, notes: list[str], timeout: float) -> tuple[bytes | None, str]:
    """The object's bytes from the loader, or a one-line problem that says why there are none."""
    try:
        reply = loader.ask(("export", name), timeout)
    except (Hang, Crashed) as exc:
        return None, f"没法取出 {name}（{exc}）"
    if "blob" in reply:
        return base64.b64decode(reply["blob"]), ""
    if "missing" in reply:
        syntax = [note for note in notes if "语法错误" in note]
        if syntax:
            return None, syntax[0]
        failed = [note for note in notes if "运行出错" in note]
        return None, (f"notebook 里没有找到 {name}（函数或类的名字不要改）"
                      + (f"；{failed[0]}，可能因此没有定义" if failed else ""))
    error = reply.get("unpicklable") or reply.get("failed") or {"names": ["?"], "message": ""}
    return None, (f"没法把 {name} 交给检查进程（{error['names'][0]}: {error['message'][:120]}）：它用到的某个全局变量"
                  "（例如锁、打开的文件）不能复制，把它放到函数里面创建")
