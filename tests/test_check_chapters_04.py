"""Chapter 04's checks judge the chapter's own steps as the chapter says: each earlier version of
format_tool_message fails exactly the checks its cell shows failing, the classroom version passes them all."""
from __future__ import annotations

import ast
import json
import re
import types
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks

CHAPTER = Path(__file__).resolve().parent.parent / "notebooks" / "04_tool_messages.ipynb"
CELLS = ["".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
         if c["cell_type"] == "code"]
DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign)
ONLY = re.compile(r'check\(format_tool_message, "ch04"(?:, only=\[([^\]]*)\])?\)')


def steps() -> list[tuple[object, list[str] | None]]:
    """(the format_tool_message defined so far, the ids the next check call runs), in the chapter's order."""
    namespace: dict = {"__name__": "chapter_04_steps"}
    found = []
    for source in CELLS:
        tree = ast.parse(source)  # the cell's imports and definitions, without its demo calls
        tree.body = [node for node in tree.body if isinstance(node, DEFINITIONS)]
        exec(compile(tree, str(CHAPTER), "exec"), namespace)
        call = ONLY.search(source.replace("\n", " ").replace("  ", " "))
        if call:
            ids = None if call.group(1) is None else re.findall(r'"(\w+)"', call.group(1))
            fn = namespace["format_tool_message"]  # with the names it uses as they are at this cell (readable)
            found.append((types.FunctionType(fn.__code__, dict(namespace), fn.__name__, fn.__defaults__), ids))
            if ids is None:  # the check of the whole chapter: the classroom version is done
                break
    return found


STEPS = steps()
# what each step's table shows failing, as the chapter's text says; the 轮到你 cells (a placeholder raising
# NotImplementedError where the student writes) fail exactly the checks their cell runs
FAILS = [{"status_from_result", "error_type", "unserializable"}, {"unserializable"},
         {"unserializable"},                                  # 轮到你 1: readable's bytes branch
         {"call_id_matched", "wire_formats"},
         {"call_id_matched", "wire_formats"},                 # 轮到你 2: the two guards
         set()]


def test_the_chapter_checks_four_steps_and_two_your_turns():
    assert len(STEPS) == len(FAILS)
    assert STEPS[-1][1] is None, "the last check runs every check of the chapter"


@pytest.mark.parametrize("step", range(len(FAILS)))
def test_each_step_fails_exactly_what_the_chapter_says(step):
    fn, only = STEPS[step]
    report = run_checks(fn, "ch04", only=only)
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    assert set(report.failed_ids()) == FAILS[step], report.render()


def test_the_classroom_version_passes_every_check_of_the_chapter():
    fn, _ = STEPS[-1]
    report = run_checks(fn, "ch04")
    assert report.ok and report.total == len(get_exercise("ch04").checks), report.render()


def test_the_toolkits_version_passes_the_chapters_checks_except_its_own_suggestion_table():
    """The toolkit puts the road's decision in the message instead of a suggestion table (chapter 05)."""
    from toolkit import format_tool_message

    report = run_checks(format_tool_message, "ch04")
    assert set(report.failed_ids()) == {"suggestion"}, report.render()


def test_a_message_without_status_or_with_a_swapped_id_fails():
    def no_status(tool_name, tool_call_id, result, fmt="openai_chat"):
        return {"role": "tool", "tool_call_id": tool_call_id, "content": json.dumps({"result": result.data})}

    def fixed_id(tool_name, tool_call_id, result, fmt="openai_chat"):
        return {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"status": result.status})}

    assert "status_from_result" in run_checks(no_status, "ch04").failed_ids()
    assert "call_id_matched" in run_checks(fixed_id, "ch04").failed_ids()
