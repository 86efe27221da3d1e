"""The exercise checker: `check(my_fn)` in a notebook, `python -m toolkit.check` in a shell, `run_checks` in pytest.

    from toolkit.check import check
    check(truncate_json_rows)                 # exercise found from the function's name
    check(my_fn, exercise="02")               # or named explicitly
    check(my_truncate, "ch02", only=["exact_count"])   # a chapter's step: some of the chapter's own checks

prints a Chinese pass/fail table with a reason and a hint for each failure and
a score; it never shows a traceback. Checks test behaviour (seeded and
hypothesis-generated cases, timing on the simulated clock, the course's own
figures), not the text of the code.

    python -m toolkit.check exercises/ex02_smart_truncate.ipynb   # run the notebook, then its checks
    python -m toolkit.check exercises/                          # progress over every exercise
    python -m toolkit.check --class CLASS_DIR --html r.html --csv r.csv   # a teacher's class report

The referee (this process in a shell or pytest, a referee process the kernel starts for `check(fn)`) holds the
checks and the verdicts and runs no student code; a worker runs the student's object, within a time limit, and
only plain data crosses back (_player.py, _worker.py, _remote.py; ARCHITECTURE.md has the map and the protocol).
What the student's code raised, the worker's death, the checker's own bug: each has its own row (see _core.py).

From pytest (or any script): `run_checks(my_fn)` (or `run_checks(my_fn, "02")`) runs the same
referee in the calling process and returns a Report with `.ok`, `.passed`, `.total`,
`.result(check_id)` and `.render()`; it prints nothing. `grade(my_fn, "check_id")` runs one
check for nbgrader's graded cells in a student's own run of the course notebook: one line, and
AssertionError when it fails; under `nbgrader autograde` the referee grades the submitted notebook out
of the kernel instead (_autograde.py), so nothing the kernel runs changes a point.
"""
from __future__ import annotations

import builtins
import os
from typing import Any, Iterable

from ._catalogue import EXERCISE_NUMBERS, all_exercises, get_exercise
from ._core import Check, CheckResult, Exercise, Fail, Report

__all__ = ["check", "grade", "report", "run_checks", "get_exercise", "exercise_for", "EXERCISE_NUMBERS",
           "Check", "CheckResult", "Exercise", "Fail", "Report"]

_print = builtins.print  # kept here: a notebook that rebinds print cannot silence or fake the table


def _name_of(obj: Any) -> str:
    return str(getattr(obj, "__name__", None) or type(obj).__name__)


def exercise_for(obj: Any) -> Exercise | None:
    """The exercise whose student object is named like `obj`, or None."""
    return next((exercise for exercise in all_exercises() if exercise.function == _name_of(obj)), None)


def _find(obj: Any, exercise: str | int | None) -> Exercise:
    found = get_exercise(exercise) if exercise is not None else exercise_for(obj)
    if found is None:
        names = "、".join(f"{e.function}（练习 {e.number}）" for e in all_exercises())
        raise ValueError(f"认不出 {_name_of(obj)} 属于哪个练习：函数名请用 {names}，"
                         f"或写 check({_name_of(obj)}, exercise=\"02\")")
    return found


def run_checks(obj: Any, exercise: str | int | None = None, *, only: Iterable[str] | None = None,
               time_limit: float | None = None) -> Report:
    """Run the checks for `obj` with this process as the referee and return the Report (prints nothing).

    Raises ValueError when the exercise can be found neither from `exercise` nor from obj's name,
    or when obj cannot be copied to a worker.
    """
    from ._player import TIME_LIMIT, blob_of, judge

    found = _find(obj, exercise)
    return judge(found, blob_of(obj), only=only, time_limit=time_limit or TIME_LIMIT)


def report(obj: Any, exercise: str | int | None = None, *, only: Iterable[str] | None = None) -> Report:
    """The Report for `obj` from the referee process check() asks (started on first use), printing nothing:
    toolkit.mine.save checks what it saves with it. ValueError (in Chinese) for an unknown exercise or check id, or an
    object that cannot be sent to the checker."""
    from . import _referee

    found = _find(obj, exercise)
    if only is not None:
        only = [found.check(i).id for i in only]
    return _referee.ask(obj, found, only=only)


def _deferred() -> bool:
    """In a notebook run by `python -m toolkit.check`, the shell's referee checks the object, not the cell."""
    return os.environ.get("TOOLKIT_CHECK_DEFER") == "1"


def check(obj: Any, exercise: str | int | None = None, *, only: Iterable[str] | None = None) -> None:
    """Print the Chinese pass/fail table for the student's function (or class) `obj`; never raises.

    `only` runs some of the checks, by id: a chapter checks each step of its piece with the checks that step
    is about (an unknown id is one Chinese line listing the ids there are)."""
    if _deferred():
        return
    try:
        found = report(obj, exercise, only=only)  # ValueError, in Chinese, for an id that is not there
    except ValueError as exc:
        _print(f"✘ {exc}")
        return
    except KeyboardInterrupt:
        _print("○ 已中断：检查没有做完。")
        return
    _print(found.render())


AUTOGRADED = ("✘ 这一格的分数由 notebook 之外的检查器给出（toolkit.check._autograde.RefereeGrades）：如果你看到这一行，"
              "nbgrader_config.py 里缺少这一步，请重新运行 python -m toolkit.check.build --nbgrader 课程目录")


def grade(obj: Any, check_id: str, exercise: str | int | None = None) -> None:
    """One check, for a graded cell of nbgrader: prints one line; AssertionError (the reason) when it fails.

    Under `nbgrader autograde` the cell is graded out of the kernel (_autograde.py replaces its output with
    the referee's verdict): here it only fails, so a course without that step gives 0, never full marks."""
    if _deferred():
        return
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise AssertionError(AUTOGRADED)
    from . import _referee

    found = _find(obj, exercise)
    report = _referee.ask(obj, found, only=[check_id])
    [result] = report.results
    if not result.passed:
        raise AssertionError(f"✘ {result.title}：{result.reason or report.problem or '没有运行'}")
    _print(f"✔ {result.title}")


def _start_referee_in_a_kernel() -> None:
    """In a Jupyter kernel, importing toolkit.check starts the kernel's referee in the background, so the first
    check() does not wait for it (TOOLKIT_CHECK_WARM=0 turns this off); nowhere else (a worker, pytest, a shell)."""
    import sys

    if "ipykernel" not in sys.modules or _deferred() or os.environ.get("TOOLKIT_CHECK_WARM", "1") == "0":
        return
    from . import _referee

    try:
        _referee.start()
    except OSError:  # no process could be started: the first check() says so in its own words
        pass


_start_referee_in_a_kernel()
