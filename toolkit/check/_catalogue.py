"""The exercises by number: a leaf of toolkit.check, so its parts (worker, referee, class report) can look an
exercise up without importing the package that imports them."""
from __future__ import annotations

import importlib

from ._core import Exercise

EXERCISE_NUMBERS = ("01", "02", "03", "04", "05", "06", "07", "08")


def get_exercise(number: str | int) -> Exercise:
    """The Exercise with this number ("02", 2 or a stem like "02_smart_truncate"); ValueError if none."""
    key = f"{int(str(number)[:2]):02d}" if str(number)[:2].isdigit() else str(number)
    if key not in EXERCISE_NUMBERS:
        raise ValueError(f"没有练习 {number!r}；可选：{', '.join(EXERCISE_NUMBERS)}")
    return importlib.import_module(f"{__package__}._ex{key}").EXERCISE


def all_exercises() -> list[Exercise]:
    return [get_exercise(n) for n in EXERCISE_NUMBERS]
