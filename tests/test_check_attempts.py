"""Students' attempts through the real referee: each wrong one fails where its mistake is, each valid one passes.

The attempts live in tests/attempts/exNN/ (see the README there). Each file is exec'd in a fresh
namespace, as a notebook cell would be, and its object is judged by `judge` in a worker process
with plain data coming back: the same path `check(fn)` and `python -m toolkit.check` take.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.check import EXERCISE_NUMBERS, get_exercise
from toolkit.check._player import Pool, blob_of, judge

ATTEMPTS = Path(__file__).resolve().parent / "attempts"
FILES = sorted(ATTEMPTS.glob("ex*/*.py"))
EXPECT = re.compile(r"^fails:\s*(\S+)\s*\|\s*(.+?)\s*$", re.M)
KEPT_DESIGN = EXERCISE_NUMBERS  # every exercise has its wrong and valid attempts, exercise 10 included


@pytest.fixture(scope="module")
def pool():
    pool = Pool()
    yield pool
    pool.close()


def load(path: Path):
    """The attempt's object, from its source run as a notebook cell runs it."""
    namespace = {"__name__": f"attempt_{path.parent.name}_{path.stem}"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace[get_exercise(path.parent.name[2:]).function]


def expected_failures(path: Path) -> dict[str, str]:
    return dict(EXPECT.findall(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_attempt_is_judged_as_its_docstring_says(path: Path, pool: Pool) -> None:
    number = path.parent.name[2:]
    pool.prefetch()
    report = judge(get_exercise(number), blob_of(load(path)), pool=pool)
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    expected = expected_failures(path)
    if path.stem.startswith("valid_"):
        assert not expected, "a valid attempt names no failing check"
        assert report.ok, report.render()
        return
    assert path.stem.startswith("wrong_") and expected, f"{path.name}: wrong_ attempts list `fails: check | phrase`"
    assert set(report.failed_ids()) == set(expected), report.render()
    for check_id, phrase in expected.items():
        assert phrase in report.result(check_id).reason, (check_id, phrase, report.result(check_id).reason)


@pytest.mark.parametrize("number", KEPT_DESIGN)
def test_exercises_that_keep_their_design_have_four_wrong_and_two_valid_attempts(number: str) -> None:
    names = [p.stem for p in (ATTEMPTS / f"ex{number}").glob("*.py")]
    assert sum(n.startswith("wrong_") for n in names) >= 4, names
    assert sum(n.startswith("valid_") for n in names) >= 2, names


def test_every_attempt_names_a_real_check() -> None:
    for path in FILES:
        ids = {c.id for c in get_exercise(path.parent.name[2:]).checks}
        assert set(expected_failures(path)) <= ids, path.name
    assert {p.parent.name[2:] for p in FILES} <= set(EXERCISE_NUMBERS)


def test_a_copy_of_the_history_earns_no_point_on_exercise_10(pool: Pool) -> None:
    """Exercise 10's do-nothing answer (its attempts are its chapter's; this one is the referee's concern): a copy
    kept the pairs, the newest results, the exempt ones and the input intact, and got 5/8."""
    def clear_anthropic(messages, budget_chars, keep_last=3, exempt=()):
        return [dict(m) for m in messages]

    pool.prefetch()
    report = judge(get_exercise("10"), blob_of(clear_anthropic), pool=pool)
    assert report.passed == 0, report.render()
    assert "一个结果也没有清除" in report.result("pairs_intact").reason


def _chapter_cell(notebook: str, defines: str) -> str:
    """The last code cell of a chapter that defines `defines`, its check() lines left out."""
    import json as _json

    cells = _json.loads((ATTEMPTS.parents[1] / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and f"def {defines}(" in "".join(c["source"])]
    return "\n".join(line for line in sources[-1].splitlines() if not line.startswith("check("))


CHAPTER_01_WRAPPED = '''
def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return fit_text(text, max_chars)
    return fit_json(value, max_chars)
'''


def test_the_chapters_own_cells_do_not_solve_exercise_02(pool: Pool) -> None:
    """Exercise 02 is one step beyond both chapters: chapter 01's fit_json (head only) with a wrapper once passed
    8 of 9 checks; chapter 02's smart_truncate cuts an array as text."""
    ch01: dict = {"__name__": "chapter01"}
    step_3 = [_chapter_cell("01_parse_tool_result.ipynb", name) for name in ("fit_text", "shrunk", "fit_json")]
    exec("import json\n" + "\n".join(step_3) + CHAPTER_01_WRAPPED, ch01)
    ch02: dict = {"__name__": "chapter02"}
    exec(_chapter_cell("02_smart_truncate.ipynb", "smart_truncate")
         + "\n\ndef truncate_json_rows(text, max_chars):\n    return smart_truncate(text, max_chars)\n", ch02)
    pool.prefetch()
    first = judge(get_exercise("02"), blob_of(ch01["truncate_json_rows"]), pool=pool)
    assert {"head_and_tail", "exact_note", "fills_budget"} <= set(first.failed_ids()), first.render()
    pool.prefetch()
    second = judge(get_exercise("02"), blob_of(ch02["truncate_json_rows"]), pool=pool)
    assert {"valid_json", "head_and_tail", "exact_note"} <= set(second.failed_ids()), second.render()
    assert first.passed <= 5 and second.passed <= 5
