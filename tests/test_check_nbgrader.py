"""The exercises as an nbgrader course, end to end: generate_assignment, then autograde, then the gradebook.

`python -m toolkit.check.build --nbgrader DIR` writes the course; nbgrader releases it and grades these
submissions: the solutions (full marks on every exercise), untouched exercises (0), a half-right attempt
(partial credit: one point per check it passes) and two forgers who kept the stub and added two lines to
the answer cell, rebinding the graded cells' `grade` or the kernel's referee client (the audit's: 7/7 when
the graded cells were the grades; 0 now that the referee grades the submitted notebook out of the
kernel). nbgrader is pinned in requirements-ci.txt; students do not install it, and without it this test
is skipped.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from toolkit.check import EXERCISE_NUMBERS, get_exercise
from toolkit.check.build import build_nbgrader, nbgrader_source

pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install -r requirements-ci.txt)")

ROOT = Path(__file__).resolve().parents[1]
HALF_RIGHT = ROOT / "tests" / "attempts" / "ex03" / "wrong_chapter_copy.py"  # 6 of 10 checks pass


FORGERS = {  # the stub kept, two lines added to the answer cell (the audit's: 7/7 each)
    "forger_grade": 'import toolkit.check\ntoolkit.check.grade = lambda *args, **kwargs: print("✔")',
    "forger_referee": ("import toolkit.check._referee as _r, toolkit.check as _c\n"
                       "_r.ask = lambda obj, exercise, only=None: _c.Report(exercise.number, exercise.title, "
                       "exercise.function, [_c.CheckResult(i, i, True) for i in only or [c.id for c in exercise.checks]])"),
}


def nbgrader(course: Path, *args: str) -> None:
    # nbgrader runs the `alembic` command by name: the environment's scripts must be on PATH even when the
    # suite was started as .venv/bin/python -m pytest, without activating the environment
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}"], cwd=course,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "TOOLKIT_DOTENV": "none", "PATH": path})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def submit(course: Path, student: str, assignment: str, nb: nbformat.NotebookNode) -> None:
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


def test_source_notebook_has_a_solution_cell_locked_cells_and_a_graded_cell_per_check() -> None:
    [solution] = (ROOT / "solutions").glob("sol03_*.ipynb")
    nb = nbgrader_source(nbformat.read(solution, as_version=4), "03")
    meta = [c.metadata["nbgrader"] for c in nb.cells]
    assert [m["grade_id"] for m in meta if m["solution"]] == ["ex03_answer"]
    graded = [(c, m) for c, m in zip(nb.cells, meta) if m["grade"]]
    assert [m["grade_id"] for _, m in graded] == [f"ex03_{c.id}" for c in get_exercise("03").checks]
    assert all(m["points"] == 1 and m["locked"] for _, m in graded)
    assert all(f"grade(retry_with_budget, {check.id!r})" in cell.source
               for (cell, _), check in zip(graded, get_exercise("03").checks))
    assert all(m["locked"] for m in meta if not m["solution"])
    assert "参考答案的取舍" not in nbformat.writes(nb)  # the solution's notes stay out of the course


def test_nbgrader_round_trip_gives_full_marks_zero_and_partial_credit(tmp_path: Path) -> None:
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    build_nbgrader(ROOT / "solutions", course)
    nbgrader(course, "generate_assignment", "*", "--force")
    assignments = sorted(p.name for p in (course / "release").iterdir())
    assert len(assignments) == len(EXERCISE_NUMBERS)
    for name in assignments:  # the solutions: the source notebooks, answers filled in
        submit(course, "solutions", name, nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4))
    for name in ("ex01_parse_tool_result", "ex03_retry", "ex08_pitfalls"):  # a plain function, async, a class
        release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        assert "### BEGIN SOLUTION" not in nbformat.writes(release)
        submit(course, "untouched", name, release)
    half = nbformat.read(course / "release" / "ex03_retry" / "ex03_retry.ipynb", as_version=4)
    [answer] = [c for c in half.cells if c.metadata.get("nbgrader", {}).get("solution")]
    answer.source = HALF_RIGHT.read_text(encoding="utf-8")
    submit(course, "half", "ex03_retry", half)
    for student, lines in FORGERS.items():
        forged = nbformat.read(course / "release" / "ex05_decisions" / "ex05_decisions.ipynb", as_version=4)
        [answer] = [c for c in forged.cells if c.metadata.get("nbgrader", {}).get("solution")]
        answer.source = answer.source + "\n\n" + lines
        submit(course, student, "ex05_decisions", forged)

    nbgrader(course, "autograde", "*", "--force")

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {(s.assignment.name, s.student.id): (s.score, s.max_score)
                  for a in gradebook.assignments for s in a.submissions}
    for name in assignments:
        total = float(len(get_exercise(name[2:4]).checks))
        assert scores[(name, "solutions")] == (total, total), name
    for name in ("ex01_parse_tool_result", "ex03_retry", "ex08_pitfalls"):
        assert scores[(name, "untouched")][0] == 0.0, name
    assert scores[("ex03_retry", "half")] == (6.0, 10.0)
    for student in FORGERS:  # the stub is still there: no point, whatever the kernel printed
        assert scores[("ex05_decisions", student)] == (0.0, float(len(get_exercise("05").checks))), student
    graded = nbformat.read(course / "autograded" / "forger_grade" / "ex05_decisions" / "ex05_decisions.ipynb",
                           as_version=4)
    outputs = [o for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade") for o in c.outputs]
    assert outputs and all(o.output_type == "error" and "还没有实现" in o.evalue for o in outputs)

