"""Chapter 05's checks ("ch05") judge each step of the chapter as the chapter says: the naive version fails what
its cell shows, the first version passes the checks its cell runs, with the chapter's is_empty it fails only the
cut result (the third version's step), the classroom version passes all.

The versions are read from the notebook's cells (their check(…) call left out; the your-turn cells, which the
student fills in, skipped) and judged by the real referee."""
from __future__ import annotations

import ast
import json
import sys
import types
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "05_decisions.ipynb"
ALL = {c.id for c in get_exercise("ch05").checks}


def _chapter_cells() -> list[str]:
    """The chapter's own code cells (not the your-turn cells a student fills in)."""
    return ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code" and "your-turn" not in c["metadata"].get("tags", [])]


def version(*markers: str, name: str = "evaluate_tool_result", slip: tuple[str, str] = ("", "")):
    """`name` as the chapter defines it after running the first cell containing each marker, in order (with the
    text `slip[0]` replaced by `slip[1]` where a cell has it: a student's slip)."""
    module = types.ModuleType("chapter_05_steps")
    sys.modules[module.__name__] = module  # while the cell runs, as a notebook's __main__ is (dataclasses need it);
    try:                                   # then gone, so the function is copied to the referee by value
        for marker in markers:
            source = next(s for s in _chapter_cells() if marker in s).split("\ncheck(")[0]
            if slip[0]:
                source = source.replace(*slip)
            exec(compile(source, f"05_decisions:{marker}", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__[name]


def _only(marker: str) -> list[str]:
    """The check ids the cell containing `marker` runs (its check(…, only=[…]))."""
    source = next(s for s in _chapter_cells() if marker in s)
    call = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "check")
    return next((ast.literal_eval(k.value) for k in call.keywords if k.arg == "only"), sorted(ALL))


@pytest.mark.parametrize("markers, name, failing", [
    (["def naive_evaluate_tool_result("], "naive_evaluate_tool_result", ALL - {"fatal_report_with_suggestion"}),
    (["第一版", "def is_empty("], "evaluate_tool_result", {"cut_result_kept"}),
    (["def is_empty(", "课堂版"], "evaluate_tool_result", set()),
], ids=["naive", "first-with-is_empty", "classroom"])
def test_each_step_of_the_chapter_fails_exactly_what_it_shows(markers, name, failing):
    report = run_checks(version(*markers, name=name), "ch05")
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    assert set(report.failed_ids()) == failing, report.render()


def test_the_first_version_passes_the_checks_its_cell_runs_before_is_empty_is_written():
    """The first version calls is_empty, which the student writes next (轮到你 1): its cell runs only the checks
    of the branches before it, and they pass."""
    only = _only("第一版")
    assert not {"zero_is_not_empty", "empty_results_broaden", "cut_result_kept"} & set(only)
    report = run_checks(version("第一版"), "ch05", only=only)
    assert report.ok, report.render()


def test_the_cells_run_the_checks_the_text_says():
    assert "cut_result_kept" in _only("def is_empty(")   # the chapter's is_empty cell fails one row: the third version
    assert sorted(_only("课堂版")) == sorted(ALL)            # the classroom version runs all eight


def test_the_toolkit_version_passes_the_chapter_checks_too():
    from toolkit import evaluate_tool_result

    assert run_checks(evaluate_tool_result, "ch05").ok


@pytest.mark.parametrize("old, new, fails", [
    ('        return data.strip() in ("", "[]", "{}")', "        return not data.strip()", {"empty_results_broaden"}),
    ("    if data is None:\n        return True\n", "    if not data:\n        return True\n",
     {"zero_is_not_empty"}),  # the original course's `not result.data`
    ("    if result.truncated:", "    if False:", {"cut_result_kept"}),
], ids=["brackets_not_empty", "not_data", "cut_branch_missing"])
def test_a_slip_in_the_students_lines_fails_the_check_the_your_turn_runs(old, new, fails):
    """The lines the two your-turn steps ask for (is_empty's body, the cut-result branch), written wrong the way
    students do, fail exactly the check that step runs."""
    assert sum(old in s for s in _chapter_cells()) == 1, old
    slipped = version("def is_empty(", "课堂版", slip=(old, new))
    assert set(run_checks(slipped, "ch05").failed_ids()) == fails
