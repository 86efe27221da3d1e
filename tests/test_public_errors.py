"""Calling a public function wrongly gets one clear Chinese sentence that says how to fix the call.

Every public entry point a student calls (toolkit's names, run_agent and resume, check_answer, the clock,
the registry, the executor, the retry pieces, faults, knowledge, the model side, MCP, clearing), each with
the wrong argument a student is likely to pass: the error is a ValueError or TypeError (never an
AttributeError from deep inside), its message is Chinese, one line, and says what to do ("请…").
"""
from __future__ import annotations

import asyncio
import re

import pytest

from toolkit import (Backoff, CircuitBreaker, RetryBudget, RetryPolicy, SimulatedClock, TaskContext, Tool,
                     ToolExecutor, ToolRegistry, call_tool_with_retry, check_answer, classify_error,
                     estimate_tokens, evaluate_tool_result, format_tool_message, inject_faults, parse_tool_call,
                     parse_tool_result, run_agent, shrink_json, use_clock)
from toolkit.agent import task_context_for
from toolkit.clearing import ClearPolicy
from toolkit.clock import set_clock
from toolkit.knowledge import ToolKnowledge, teach
from toolkit.llm import make_client
from toolkit.llm.offline import chat_completion
from toolkit.llm.server import OfflineServer
from toolkit.mcp import MCPServer
from toolkit.mine import load, pieces, save, toolkit_piece
from toolkit.simulation import course_tools_with_fault
from toolkit.tools import default_registry


def tool() -> str:
    return "晴"


WRONG_CALLS = {
    "run_agent with an empty question": lambda: run_agent(""),
    "run_agent with max_turns=0": lambda: run_agent("问", max_turns=0),
    "run_agent with max_tool_failures=0": lambda: run_agent("问", max_tool_failures=0),
    "run_agent with an evaluate that is no function": lambda: run_agent("问", evaluate=3),
    "run_agent with a client but no model": lambda: run_agent("问", client=object()),
    "run_agent with task_context='yes'": lambda: run_agent("问", task_context="yes"),
    "task_context_for with task_context='yes'": lambda: task_context_for("问", "yes"),
    "check_answer with an answer that is no text": lambda: check_answer(3, {"total": 3}),
    "check_answer with the tool's result None": lambda: check_answer("总销售额 9692", None),
    "evaluate_tool_result with a raw dict": lambda: evaluate_tool_result({"data": 1}, "问"),
    "classify_error with a string": lambda: classify_error("timeout"),
    "format_tool_message without a call id": lambda: format_tool_message("t", "", 1),
    "format_tool_message with an unknown format": lambda: format_tool_message("t", "c1", 1, fmt="gemini"),
    "parse_tool_call with an unknown format": lambda: parse_tool_call({}, fmt="gemini"),
    "parse_tool_result with max_tokens=0": lambda: parse_tool_result(1, max_tokens=0),
    "parse_tool_result with an unknown kind": lambda: parse_tool_result(1, kind="search"),
    "shrink_json with max_chars=2": lambda: shrink_json(1, 2),
    "estimate_tokens of a number": lambda: estimate_tokens(3),
    "RetryPolicy with max_retries=-1": lambda: RetryPolicy(max_retries=-1),
    "RetryPolicy with attempt_timeout=0": lambda: RetryPolicy(attempt_timeout=0),
    "Backoff with an unknown jitter": lambda: Backoff(jitter="random"),
    "RetryBudget with a negative capacity": lambda: RetryBudget(capacity=-1),
    "CircuitBreaker with failure_threshold=0": lambda: CircuitBreaker(failure_threshold=0),
    "CircuitBreaker with a negative cooldown": lambda: CircuitBreaker(cooldown=-1),
    "ToolExecutor with result_max_chars=5": lambda: ToolExecutor(result_max_chars=5),
    "ToolExecutor with max_retries and a policy": lambda: ToolExecutor(max_retries=1, policy=RetryPolicy()),
    "ToolExecutor with a parse that is no function": lambda: ToolExecutor(parse="json"),
    "execute with the tool's result instead of the tool": lambda: asyncio.run(ToolExecutor().execute(tool(), "t")),
    "call_tool_with_retry with the tool's result": lambda: asyncio.run(call_tool_with_retry(tool())),
    "call_tool_with_retry with max_retries='3'": lambda: asyncio.run(call_tool_with_retry(tool, max_retries="3")),
    "inject_faults with an unknown fault": lambda: inject_faults(tool, ["meteor"]),
    "inject_faults with a rate over 1": lambda: inject_faults(tool, rates={"timeout": 2}),
    "use_clock with a number": lambda: use_clock(3).__enter__(),
    "set_clock with a number": lambda: set_clock(3),  # type: ignore[arg-type]
    "SimulatedClock.advance backwards": lambda: SimulatedClock().advance(-1),
    "ToolRegistry.add of a tool without a name": lambda: ToolRegistry().add(Tool("", tool, "查天气", {})),
    "ToolRegistry.register of the tool's result": lambda: ToolRegistry().register(tool()),
    "ToolRegistry.register with an unknown kind": lambda: ToolRegistry().register(tool, kind="search"),
    "ToolRegistry.register with a schema that is text": lambda: ToolRegistry().register(tool, parameters="city"),
    "TaskContext with steps as one string": lambda: TaskContext("查天气再订票", "查天气"),  # type: ignore[arg-type]
    "TaskContext with done past the steps": lambda: TaskContext("任务", ["一"], done=2),
    "teach without a name": lambda: teach("", ToolKnowledge()),
    "teach with no ToolKnowledge": lambda: teach("get_weather", {"required": {}}),  # type: ignore[arg-type]
    "make_client with a number": lambda: make_client(3),  # type: ignore[arg-type]
    "OfflineServer with a model_fn that is no function": lambda: OfflineServer("离线"),  # type: ignore[arg-type]
    "chat_completion with neither content nor calls": lambda: chat_completion(None, None),
    "MCPServer with call_timeout=0": lambda: MCPServer(call_timeout=0),
    "ClearPolicy with keep_last=-1": lambda: ClearPolicy(keep_last=-1),
    "default_registry with a data_dir that is no path": lambda: default_registry(data_dir=3),  # type: ignore[arg-type]
    "course_tools_with_fault with an unknown fault": lambda: course_tools_with_fault("meteor").__enter__(),
    "save to a slot that does not exist": lambda: save("parser", tool),
    "save of the function's result": lambda: save("parse", tool()),
    "load of a slot that does not exist": lambda: load("parser"),
    "pieces with no slot named": lambda: pieces(),
    "toolkit_piece of a slot without a stand-in": lambda: toolkit_piece("loop"),
}


@pytest.mark.parametrize("call", WRONG_CALLS.values(), ids=WRONG_CALLS.keys())
def test_a_wrong_call_says_in_one_chinese_sentence_how_to_fix_it(call):
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    message = str(raised.value)
    assert type(raised.value) in (ValueError, TypeError) or raised.value.__class__.__name__ == "ConfigError", message
    assert re.search(r"[\u4e00-\u9fff]", message), f"not Chinese: {message}"
    assert "\n" not in message and len(message) <= 300, message
    assert "请" in message or "把" in message, f"does not say how to fix the call: {message}"


def test_check_answer_without_a_tool_result_is_a_check_not_a_wrong_call():
    """The model answered without calling a tool: no number of the answer has a source, and that is a verdict."""
    assert check_answer("总销售额 9692").unsupported_numbers == [9692]
    assert check_answer("我没有查到数据，请稍后再试").ok
