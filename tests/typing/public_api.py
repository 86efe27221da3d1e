"""The public API as a student's code uses it, type-checked by mypy (tests/test_typing.py), never run.

Every line is a use the course teaches; `assert_type` pins what a name gives back,
so a changed signature or a lost annotation fails the check. Like hynek/stamina's
tests/typing: the types are part of the API.
"""
from __future__ import annotations

import asyncio
from typing import Any, assert_type

from toolkit import (Backoff, CircuitBreaker, ErrorCode, PartialResult, RetryBudget, RetryPolicy, SimulatedClock,
                     TaskContext, Tool, ToolEvent, ToolExecutor, ToolRegistry, ToolResult, call_tool_with_retry,
                     classify_error, dumps, estimate_tokens, evaluate_tool_result, format_tool_message, get_clock,
                     inject_faults, parse_tool_call, parse_tool_result, shrink_json, smart_truncate, use_clock)
from toolkit.agent import AgentRun, run_agent
from toolkit.clock import Clock
from toolkit.breaker import BreakerState
from toolkit.decisions import Action, Decision
from toolkit.results import ErrorInfo
from toolkit.retry import Attempt, RetryOutcome, retry_call
from toolkit.truncate import Truncation, truncate_parts
from toolkit.verify import AnswerCheck, check_answer
from toolkit.wire import ToolCall


def search(query: str) -> str:
    return f"结果：{query}"


async def chapter_03() -> None:
    outcome = await call_tool_with_retry(search, "上海", max_retries=3)
    assert_type(outcome, RetryOutcome)
    result, error = outcome
    assert_type(error, "str | None")
    assert_type(outcome.trace, tuple[Attempt, ...])
    policy = RetryPolicy(max_retries=2, backoff=Backoff(base=0.5, jitter="full"), attempt_timeout=5.0)
    assert_type(policy.backoff.schedule(3), "list[float]")
    assert_type(await retry_call(policy, search, (), {"query": "x"}), RetryOutcome)
    assert_type(classify_error(TimeoutError()), ErrorInfo)
    assert_type(ErrorCode.TIMEOUT == "TIMEOUT", bool)


async def chapter_06() -> None:
    registry = ToolRegistry()
    registry.register(search, description="搜索", kind="query")
    events: list[ToolEvent] = []
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=1), budget=RetryBudget(capacity=50),
                            breaker=CircuitBreaker(failure_threshold=3), hooks=[events.append])
    result = await executor.execute(inject_faults(search, ["timeout", "ok"]), "search", "上海")
    assert_type(result, ToolResult)
    assert_type(result.truncated, "bool | None")
    assert_type(await executor.run_tool_call({"id": "c1", "function": {"name": "search", "arguments": "{}"}}),
                ToolResult)
    assert_type(await executor.run_tool_calls([parse_tool_call({"id": "c2"})]), "list[ToolResult]")
    assert_type(executor.get_summary(), dict)
    assert_type(events[0].state, BreakerState | None)
    assert_type(events[0].tokens, "int | None")
    tool = registry.get("search")
    assert_type(tool, Tool | None)
    call = parse_tool_call({"id": "c3", "function": {"name": "search", "arguments": '{"query": "x"}'}})
    assert_type(call, ToolCall)
    assert_type(call.parse_error, "str | None")


def chapters_01_02_04_05() -> None:
    assert_type(parse_tool_result({"a": 1}, max_tokens=100, kind="query"), str)
    assert_type(smart_truncate("x" * 100, max_chars=50, keep_head=20, keep_tail=20), str)
    assert_type(truncate_parts("x" * 100, 50, 20, 20), Truncation)
    assert_type(shrink_json([1, 2, 3], 20), Any)
    assert_type(dumps({"a": 1}), str)
    assert_type(estimate_tokens("文本"), int)
    partial = ToolResult("weather", {"上海": "晴"}, "部分结果缺失", error_type="partial")
    assert_type(format_tool_message("weather", "call_1", partial, fmt="anthropic"), dict)
    assert_type(format_tool_message("weather", "call_1", PartialResult({"上海": "晴"}, "北京超时")), dict)
    decision = evaluate_tool_result(partial, "天气怎么样")
    assert_type(decision, Decision)
    assert_type(decision["action"], Action)
    assert_type(TaskContext("任务", ["一", "二"]).advance(), TaskContext)


def chapter_07() -> None:
    with use_clock(SimulatedClock(seed=0)) as clock:
        assert_type(clock, Clock)
        assert_type(get_clock().now(), float)
        run = run_agent("哪个类别销售额最高？", max_turns=4, evaluate=evaluate_tool_result)
    assert_type(run, AgentRun)
    assert_type(check_answer(run.answer, *run.tool_results, question=run.question), AnswerCheck)


def charts() -> None:
    from matplotlib.figure import Figure

    from toolkit.viz import LiveCharts, TimelineChart, retry_timeline, truncation_map, truncation_parts
    from toolkit.viz.timeline import TimelineChart as Timeline

    assert_type(retry_timeline([]), Figure)  # names the package loads on first use keep their types
    assert_type(truncation_map("abc", "ab"), Figure)
    assert_type(truncation_parts("abc", "ab"), "dict[str, int]")
    assert_type(TimelineChart, type[Timeline])
    assert_type(LiveCharts(), LiveCharts)


asyncio.run(chapter_03())
