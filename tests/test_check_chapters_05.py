"""Chapter 05's checks ("ch05") judge each step of the chapter as the chapter says: the naive version and the
first two versions fail exactly the checks their cells show failing, the classroom version passes all.

The versions are read from the notebook's cells (their check(…) call left out) and judged by the real referee."""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "05_decisions.ipynb"
ALL = {c.id for c in get_exercise("ch05").checks}


def version(marker: str, name: str = "evaluate_tool_result"):
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "code" and marker in "".join(c["source"]))
    module = types.ModuleType("chapter_05_steps")
    sys.modules[module.__name__] = module  # while the cell runs, as a notebook's __main__ is (dataclasses need it);
    try:                                   # then gone, so the function is copied to the referee by value
        exec(compile(source.split("\ncheck(")[0], f"05_decisions:{marker}", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__[name]


@pytest.mark.parametrize("marker, name, failing", [
    ("def naive_evaluate_tool_result(", "naive_evaluate_tool_result",
     ALL - {"fatal_report_with_suggestion"}),
    ("第一版", "evaluate_tool_result", {"empty_results_broaden", "cut_result_kept"}),
    ("第二版", "evaluate_tool_result", {"cut_result_kept"}),
    ("课堂版", "evaluate_tool_result", set()),
], ids=["naive", "first", "second", "classroom"])
def test_each_step_of_the_chapter_fails_exactly_what_it_shows(marker, name, failing):
    report = run_checks(version(marker, name), "ch05")
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    assert set(report.failed_ids()) == failing, report.render()


def test_the_cells_run_the_checks_the_text_says():
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]]
    first = next(s for s in cells if "第一版" in s and "check(" in s)
    second = next(s for s in cells if "第二版" in s and "check(" in s)
    assert '"empty_results_broaden"' in first and '"cut_result_kept"' not in first   # first fails one row
    assert '"cut_result_kept"' in second                                             # second fails one row


def test_the_toolkit_version_passes_the_chapter_checks_too():
    from toolkit import evaluate_tool_result

    assert run_checks(evaluate_tool_result, "ch05").ok
