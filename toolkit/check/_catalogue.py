"""The exercises by number, and the chapters' own checks: a leaf of toolkit.check, so its parts (worker,
referee, class report) can look an exercise up without importing the package that imports them.

An exercise NN lives in `_exNN.py`; a chapter that checks its piece step by step has `_chNN.py` (its
`EXERCISE.number` is "chNN"), found by its file, so adding a chapter's checks touches no list here."""
from __future__ import annotations

import importlib
import importlib.util

from ._core import Exercise

EXERCISE_NUMBERS = ("01", "02", "03", "04", "05", "06", "07", "08", "10", "11")


def get_exercise(number: str | int) -> Exercise:
    """The Exercise with this number ("02", 2 or a stem like "02_smart_truncate"), or a chapter's checks
    ("ch02"); ValueError if none."""
    if str(number).startswith("ch"):
        return _chapter(str(number))
    key = f"{int(str(number)[:2]):02d}" if str(number)[:2].isdigit() else str(number)
    if key not in EXERCISE_NUMBERS:
        raise ValueError(f"没有练习 {number!r}；可选：{', '.join(EXERCISE_NUMBERS)}")
    return importlib.import_module(f"{__package__}._ex{key}").EXERCISE


def all_exercises() -> list[Exercise]:
    return [get_exercise(n) for n in EXERCISE_NUMBERS]


def _chapter(name: str) -> Exercise:
    key = name[2:4]
    if not key.isdigit() or importlib.util.find_spec(f"{__package__}._ch{key}") is None:
        raise ValueError(f"第 {key} 章没有自己的检查（{name!r}）")
    return importlib.import_module(f"{__package__}._ch{key}").EXERCISE
