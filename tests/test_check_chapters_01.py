"""Chapter 01's checks judge the chapter's own steps as the chapter says: each step fails exactly the checks
its text says it has not reached yet, the final version passes all, the original course's parser fails where
its bugs are."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from toolkit.check import get_exercise
from toolkit.check._player import Pool, blob_of, judge

CHAPTER = Path(__file__).resolve().parent.parent / "notebooks" / "01_parse_tool_result.ipynb"
ALL = {c.id for c in get_exercise("ch01").checks}
BUDGET = {"within_budget", "json_stays_json", "keeps_head_and_tail"}
ERRORS = {"exception_reported", "retryable_said"}


@pytest.fixture(scope="module")
def pool():
    pool = Pool()
    yield pool
    pool.close()


YOUR_TURN = 'raise NotImplementedError("轮到你")'  # a cell left for the student: the chapter's version follows it


def _defining_cells() -> list[str]:
    """The chapter's own cells that define its parser's functions, in order (the cells left for the student and
    everything after the save are left out)."""
    nb = json.loads(CHAPTER.read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cells = cells[:next(i for i, s in enumerate(cells) if "save(" in s)]
    return [s for s in cells if YOUR_TURN not in s and re.search(r"^def \w+\(", s, re.M)]


def _namespace(cells: list[str]) -> dict:
    """The top-level imports, definitions and assignments of `cells`, run in order (demo calls left out)."""
    namespace: dict = {"json": json}
    for source in cells:
        kept = [n for n in ast.parse(source).body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                                     ast.Assign))]
        exec(compile(ast.Module(kept, []), str(CHAPTER), "exec"), namespace)
    return namespace


def _definitions() -> list[dict]:
    """The naive parser, then the namespace after each version of parse_tool_result the chapter writes; the third
    version is the one with step 3's helpers written (fit_text, shrunk, fit_json)."""
    cells = _defining_cells()
    steps = [i for i, s in enumerate(cells) if "def parse_tool_result(" in s or "def naive_parse" in s]
    return [_namespace(cells[:i + 1]) for i in steps[:3]] + [_namespace(cells)]


def _failed(fn, pool) -> set[str]:
    pool.prefetch()
    report = judge(get_exercise("ch01"), blob_of(fn), pool=pool)
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    return set(report.failed_ids())


@pytest.mark.parametrize("step, fails", [
    (1, BUDGET | ERRORS),   # first step: values, not keys; JSON
    (2, BUDGET),            # second step: errors say whether retrying helps
    (3, set()),             # the final version
])
def test_each_step_of_the_chapter_fails_exactly_what_it_has_not_reached(step, fails, pool):
    namespace = _definitions()[step]
    assert _failed(namespace["parse_tool_result"], pool) == fails


def test_the_original_course_parser_fails_on_error_none_repr_budget_and_exceptions(pool):
    naive = _definitions()[0]["naive_parse_tool_result"]
    failed = _failed(naive, pool)
    assert {"error_none_is_success", "json_not_repr", "within_budget", "exception_reported"} <= failed
    assert failed < ALL


def test_the_failure_mark_is_one_a_plain_linux_font_draws_and_the_originals_emoji_is_still_accepted(pool):
    """The chapter writes ✘ (DejaVu Sans has it; the emoji U+274C shows as a box on a fresh Linux); a student who
    kept the original course's emoji is not failed for the mark alone, a student who wrote no mark is."""
    assert "\u274c" not in CHAPTER.read_text(encoding="utf-8")
    assert _definitions()[3]["parse_tool_result"](TimeoutError("查询超时")).startswith("✘ 工具执行失败")
    cells = _defining_cells()
    for mark, fails in (("\u274c", set()), ("", {"error_envelope_reported", "exception_reported"})):
        changed = [s.replace("✘ 工具执行失败", f"{mark} 工具执行失败".lstrip()) for s in cells]
        namespace = _namespace(changed)
        assert _failed(namespace["parse_tool_result"], pool) == fails, mark
