"""The exercise checker: `check(my_fn)` in a notebook, `python -m toolkit.check` in a shell, `run_checks` in pytest.

    from toolkit.check import check
    check(truncate_head_tail)                 # exercise found from the function's name
    check(my_fn, exercise="02")               # or named explicitly

prints a Chinese pass/fail table with a reason and a hint for each failure and
a score; it never shows a traceback. Checks test behaviour (seeded and
hypothesis-generated cases, timing on the simulated clock, the course's own
figures), not the text of the code.

    python -m toolkit.check exercises/ex02_smart_truncate.ipynb   # run the notebook, then its checks
    python -m toolkit.check exercises/                          # progress over every exercise

From pytest (or any script): `run_checks(my_fn)` (or `run_checks(my_fn, "02")`) returns a Report with
`.ok`, `.passed`, `.total`, `.result(check_id).passed` and `.render()`; it prints nothing.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._core import Check, CheckResult, Exercise, Fail, Report, run_checks as _run_checks

__all__ = ["check", "run_checks", "get_exercise", "exercise_for", "EXERCISE_NUMBERS",
           "Check", "CheckResult", "Exercise", "Fail", "Report"]

EXERCISE_NUMBERS = ("01", "02", "03", "04", "05", "06", "07", "08")


def get_exercise(number: str | int) -> Exercise:
    """The Exercise with this number ("02", 2 or a stem like "02_smart_truncate"); ValueError if none."""
    key = f"{int(str(number)[:2]):02d}" if str(number)[:2].isdigit() else str(number)
    if key not in EXERCISE_NUMBERS:
        raise ValueError(f"没有练习 {number!r}；可选：{', '.join(EXERCISE_NUMBERS)}")
    return importlib.import_module(f"{__name__}._ex{key}").EXERCISE


def all_exercises() -> list[Exercise]:
    return [get_exercise(n) for n in EXERCISE_NUMBERS]


def _name_of(obj: Any) -> str:
    return str(getattr(obj, "__name__", None) or type(obj).__name__)


def exercise_for(obj: Any) -> Exercise | None:
    """The exercise whose student object is named like `obj`, or None."""
    name = _name_of(obj)
    for exercise in all_exercises():
        if exercise.function == name:
            return exercise
    return None


def run_checks(obj: Any, exercise: str | int | None = None) -> Report:
    """Run the checks for `obj` and return the Report (for pytest and scripts; prints nothing).

    Raises ValueError when the exercise can be found neither from `exercise` nor from obj's name.
    """
    found = get_exercise(exercise) if exercise is not None else exercise_for(obj)
    if found is None:
        names = "、".join(f"{e.function}（练习 {e.number}）" for e in all_exercises())
        raise ValueError(f"认不出 {_name_of(obj)} 属于哪个练习：函数名请用 {names}，"
                         f"或写 check({_name_of(obj)}, exercise=\"02\")")
    return _run_checks(obj, found)


def check(obj: Any, exercise: str | int | None = None) -> None:
    """Print the Chinese pass/fail table for the student's function (or class) `obj`; never raises."""
    try:
        report = run_checks(obj, exercise)
    except ValueError as exc:
        print(f"❌ {exc}")
        return
    print(report.render())
