"""nbgrader's points from the referee: an autograde step that grades the submitted notebook out of the kernel.

nbgrader executes a submission in a kernel the student's code runs in, so a graded cell that calls the
checker there proves nothing: two lines in the answer cell (rebinding `grade`, or the kernel's referee
client) would print every ✔. This preprocessor runs after nbgrader's Execute and before SaveAutoGrades.
It runs the submitted notebook the way `python -m toolkit.check` does (this process is the referee: the
cells run in a loader worker, the answer is judged in a fresh one, isolated where the system allows), and
replaces each graded cell's outputs with the referee's verdict for its check: passed, a line that says
so; failed, an error output with the Chinese reason, which nbgrader scores 0. Whatever the kernel
printed in those cells is dropped. nbgrader_config.py (written by `python -m toolkit.check.build
--nbgrader`) puts it in place; while it runs, `grade()` in the kernel only says who grades (and fails,
so a course whose configuration lacks this step gives 0, never full marks).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

def _graded(cell: Any) -> tuple[str, str] | None:
    """(exercise number, check id) of a graded cell, from its grade_id exNN_<check id> (see build.py)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = str(meta.get("grade_id") or "")
    if not (meta.get("grade") and cell.get("cell_type") == "code" and grade_id[:2] == "ex" and grade_id[4:5] == "_"
            and grade_id[2:4].isdigit()):
        return None
    return grade_id[2:4], grade_id[5:]


class RefereeGrades(Preprocessor):
    """Each graded cell's outputs: the out-of-kernel referee's verdict on its check."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless switched on

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        import nbformat

        from ._catalogue import get_exercise
        from ._sandbox import harden
        from .notebook import run_notebook

        graded = [(cell, found) for cell in nb.cells if (found := _graded(cell))]
        if not graded:
            return nb, resources
        harden()
        exercise = get_exercise(graded[0][1][0])
        with tempfile.TemporaryDirectory(prefix="toolkit-autograde-") as folder:
            path = Path(folder) / f"ex{exercise.stem}.ipynb"
            nbformat.write(nbformat.from_dict(nb), path)
            run = run_notebook(path)
        report = run.report
        for cell, (_, check_id) in graded:
            try:
                result = report.result(check_id)
            except KeyError:
                cell.outputs = [_error(f"✘ 没有这项检查：{check_id}")]
                continue
            if result.passed:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"✔ {result.title}（检查器评分）\n")]
            else:
                cell.outputs = [_error(f"✘ {result.title}：{result.reason or report.problem or '没有运行'}")]
        self.log.info("toolkit.check: %s %d/%d (graded out of the kernel)", path.name, report.passed, report.total)
        return nb, resources


def _error(text: str) -> Any:
    import nbformat

    return nbformat.v4.new_output("error", ename="AssertionError", evalue=text, traceback=[text])
