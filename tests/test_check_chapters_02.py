"""Chapter 02's checks (toolkit/check/_ch02.py) judge the chapter's steps as the chapter says: each version of
smart_truncate fails exactly the check its step is about, and the chapter's final version passes all."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks
from toolkit.check._ch02 import REPORT

CHAPTER = Path(__file__).resolve().parents[1] / "notebooks" / "02_smart_truncate.ipynb"
YOUR_TURN = 'raise NotImplementedError("轮到你")'  # a cell left for the student: the chapter's version follows it
CODE = [s for s in ("".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
                    if c["cell_type"] == "code") if YOUR_TURN not in s]


def _defined(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source.split("\n\ncheck(", 1)[0], str(CHAPTER), "exec"), namespace)
    return namespace


def versions() -> list:
    """The chapter's smart_truncate, version by version (each defining cell runs alone, without its check; the
    cells left for the student are not versions)."""
    return [_defined(s)["smart_truncate"] for s in CODE if re.search(r"^def smart_truncate\(", s, re.M)]

# version (0-based) -> the checks it fails, of all seven
FAILS = {
    0: {"keeps_tail", "line_boundaries", "impossible_sizes", "fits_max_chars"},  # head only
    1: {"line_boundaries", "impossible_sizes", "fits_max_chars"},                # head + tail at fixed places
    2: {"exact_count", "impossible_sizes", "fits_max_chars"},                    # cuts moved, count not
    3: {"impossible_sizes", "fits_max_chars"},                                   # exact, overlaps when too big
    4: {"fits_max_chars"},                                                       # raises for two arguments
    5: set(),                                                                    # the chapter's version
}


def test_the_chapter_and_its_checks_use_the_same_report():
    assert _defined(CODE[0])["REPORT"] == REPORT


@pytest.mark.parametrize("step", sorted(FAILS))
def test_each_step_fails_exactly_the_checks_the_chapter_says(step):
    report_ = run_checks(versions()[step], "ch02")
    assert not [r.id for r in report_.results if r.kind == "error"], report_.render()
    assert set(report_.failed_ids()) == FAILS[step], report_.render()


def test_the_chapter_checks_are_found_by_name():
    exercise = get_exercise("ch02")
    assert exercise.function == "smart_truncate" and len(exercise.checks) == 7
