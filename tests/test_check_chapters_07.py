"""Chapter 07's checks (toolkit/check/_ch07.py): the chapter's final loop passes them all; its first version
fails exactly the two the chapter says it fails (the failure limit); typical wrong loops fail theirs. The chapter's
loops take their format_message and evaluate from the pieces chapters 04 and 05 save (`chapters_my_toolkit`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "07_sales_agent.ipynb"


def code_cells() -> list[str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def versions() -> list:
    """Each `async def run_my_agent(` cell of the chapter, defined after the chapter's import cell and the cell that
    reads the student's pieces and defines tool_message (the pieces chapters 01-07 save)."""
    cells = code_cells()
    imports = cells[0] + "\n" + next(c for c in cells if re.search(r"^def tool_message\(", c, re.M))
    found = []
    for source in cells:
        if re.search(r"^async def run_my_agent\(", source, re.M):
            namespace: dict = {"__name__": "chapter07"}
            exec(compile(imports + "\n" + source, str(NOTEBOOK), "exec"), namespace)
            found.append(namespace["run_my_agent"])
    return found


LIMIT = ["failing_tool_stops_after_3", "limit_is_told_to_the_model"]


def _failed(fn) -> list[str]:
    report = run_checks(fn, "ch07", time_limit=20)
    assert not [r for r in report.results if r.kind == "error"], report.render()
    return [r.id for r in report.results if not r.passed]


def _loop(source: str):
    namespace: dict = {"__name__": "attempt07"}
    exec(compile("from toolkit import ToolResult, format_tool_message\nfrom toolkit.agent import SYSTEM_PROMPT\n"
                 + source, "attempt07", "exec"), namespace)
    return namespace["run_my_agent"]


def test_the_chapter_writes_two_versions(chapters_my_toolkit):
    assert len(versions()) == 2


def test_the_checks_are_the_chapters_five():
    assert len(get_exercise("ch07").checks) == 5


def test_the_first_version_fails_only_the_failure_limit_checks(chapters_my_toolkit):
    assert _failed(versions()[0]) == LIMIT


def test_the_chapter_final_version_passes_every_check(chapters_my_toolkit):
    assert _failed(versions()[-1]) == []


NO_TOOL_MESSAGE = '''
async def run_my_agent(question, client, model, executor, max_turns=6):
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    for turn in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages,
                                               tools=executor.registry.openai_tools()).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content, messages
        results = await executor.run_tool_calls(reply.tool_calls)
        print(results)  # printed, never appended: the model never reads them
    return None, messages
'''

NEVER_STOPS = '''
async def run_my_agent(question, client, model, executor, max_turns=6):
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    while True:
        reply = client.chat.completions.create(model=model, messages=messages,
                                               tools=executor.registry.openai_tools()).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content, messages
        results = await executor.run_tool_calls(reply.tool_calls)
        for call, result in zip(reply.tool_calls, results):
            messages.append(format_tool_message(result.name, call.id, result))
'''

# counts failures per (tool, arguments): the model that rewords its arguments is never stopped
PER_ARGUMENTS = '''
async def run_my_agent(question, client, model, executor, max_turns=6):
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    failures = {}
    for turn in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages,
                                               tools=executor.registry.openai_tools()).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content, messages
        for call in reply.tool_calls:
            key = (call.function.name, call.function.arguments)
            if failures.get(key, 0) >= 3:
                result = ToolResult(key[0], None, "不要再试", error_type="fatal", error_code="TOOL_FAILURE_LIMIT")
            else:
                [result] = await executor.run_tool_calls([call])
                failures[key] = failures.get(key, 0) + 1 if result.status == "error" else 0
            messages.append(format_tool_message(result.name, call.id, result))
    return None, messages
'''

# stops running the tool but gives the model no tool message for the refused call
SILENT_REFUSAL = PER_ARGUMENTS.replace("key = (call.function.name, call.function.arguments)",
                                      "key = call.function.name").replace(
    'result = ToolResult(key[0], None, "不要再试", error_type="fatal", error_code="TOOL_FAILURE_LIMIT")',
    "continue")


@pytest.mark.parametrize("source, fails", [
    # the API (the offline model too, since it checks as real endpoints do) refuses a conversation whose tool calls
    # have no tool message: every check that talks to the model fails, saying so
    (NO_TOOL_MESSAGE, ["answers_from_the_tool", "one_tool_message_per_call", "stops_at_max_turns", *LIMIT]),
    (NEVER_STOPS, ["stops_at_max_turns", "failing_tool_stops_after_3", "limit_is_told_to_the_model"]),
    (PER_ARGUMENTS, LIMIT),
    (SILENT_REFUSAL, LIMIT),  # the refused call has no tool message: the next request is refused (HTTP 400)
], ids=["no_tool_message", "never_stops", "per_arguments", "silent_refusal"])
def test_typical_wrong_loops_fail_their_checks(source, fails):
    assert _failed(_loop(source)) == fails


def test_a_loop_that_leaves_a_call_unanswered_is_told_what_the_api_refused():
    report = run_checks(_loop(NO_TOOL_MESSAGE), "ch07", time_limit=20)
    assert "后面必须紧跟回应每个 tool_call_id 的 tool 消息" in report.result("one_tool_message_per_call").reason
