"""The answers appendix 06b gives to its 想一想 questions are true of the code: the executor chapter 06 saves
(`chapters_my_toolkit`, as the appendix reads it with pieces("executor")) and the toolkit's ToolExecutor."""
from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, said

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, get_clock, inject_faults, use_clock
from toolkit.agent import run_agent
from toolkit.mine import pieces
from toolkit.tools import analyze_sales_csv, default_registry

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "06b_executor_more.ipynb"
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def run(coro_fn, seed: int = 0):
    async def body():
        with use_clock(SimulatedClock(seed=seed)):
            return await coro_fn()

    return asyncio.run(body())


def test_q1_the_saved_executor_keeps_the_last_three_calls_while_its_summary_counts_all_five():
    said_here = answer(CHAPTER, 1)

    async def mock_search(query):
        await get_clock().sleep(0.5)
        return f"搜索结果: {query} 相关内容"

    async def read_finance(path):
        raise PermissionError(f"没有访问 {path} 的权限")

    my = pieces("executor")
    assert "第 06 章保存" in repr(my), repr(my)  # the student's executor, not the toolkit's stand-in

    async def five():
        mine = my.executor(history_limit=3)
        await mine.execute(inject_faults(mock_search, ["timeout", "ok"]), "search", "Python MCP")
        await mine.execute(read_finance, "read_finance", "finance/2026.csv")
        for city in ("北京", "上海", "广州"):
            await mine.execute(mock_search, "search", city)
        return mine

    mine = run(five)
    assert len(mine.call_history) == number(said_here, r"只剩最近 (\d+) 条") == 3
    assert [r.data for r in mine.call_history] == [f"搜索结果: {c} 相关内容" for c in ("北京", "上海", "广州")]
    summary = mine.get_summary()
    assert summary["total_calls"] == number(said_here, r"total_calls=(\d+)") == 5
    assert summary["success_rate"] == float(said(said_here, r"success_rate=([\d.]+)")) == 0.8


def _sales_trace():
    sales = default_registry().get("analyze_sales_csv")
    flaky = ToolRegistry()
    flaky.register(inject_faults(analyze_sales_csv, ["timeout", "timeout", "ok"]), name=sales.name,
                   description=sales.description, parameters=sales.parameters)
    executor = ToolExecutor(max_retries=3)
    with use_clock(SimulatedClock(seed=0)):
        run_agent("哪个类别销售额最高？总销售额是多少？", registry=flaky, executor=executor)
    [result] = executor.call_history
    return result.trace


def test_q2_the_trace_holds_two_timeouts_then_ok_with_jittered_waits_and_none_after_success():
    said_here = answer(CHAPTER, 2)
    trace = _sales_trace()
    assert len(trace) == number(said_here, r"^(\d+) 次") == 3
    assert [a.outcome for a in trace] == ["timeout", "timeout", "ok"]
    assert [a.error_code for a in trace[:2]] == [said(said_here, r"错误码 `(\w+)`")] * 2
    waits = [float(w) for w in re.findall(r"约 ([\d.]+) 秒和 ([\d.]+) 秒", said_here)[0]]
    assert [round(a.wait_after, 2) for a in trace[:2]] == waits and waits[0] != waits[1]
    assert trace[2].wait_after == 0


def test_q3_only_the_valid_call_runs_the_other_three_are_refused_with_zero_attempts():
    said_here = answer(CHAPTER, 3)

    def call(name, arguments, call_id):
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    calls = [call("get_weather", '{"city": "上海"}', "call_1"), call("get_weather", '{"city": "纽约"}', "call_2"),
             call("get_stock_price", '{"code": "600519"}', "call_3"), call("get_weather", '{"city": "上海"', "call_4")]
    results = run(lambda: ToolExecutor(registry=default_registry()).run_tool_calls(calls))
    assert [r.attempts for r in results] == [1, 0, 0, 0]
    codes = [str(r.error_code) if r.error_code else None for r in results]
    assert codes == [None, *re.findall(r"（`(\w+)`）", said_here)] == [
        None, "INVALID_ARGUMENTS", "UNKNOWN_TOOL", "INVALID_ARGUMENTS_JSON"]
    assert results[0].ok


WRONG_ANSWERS = [(1, "只剩最近 3 条", "只剩最近 5 条"), (2, "约 0.84 秒和 1.52 秒", "约 1.00 秒和 2.00 秒"),
                 (3, "（`UNKNOWN_TOOL`）", "（`NOT_FOUND`）")]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_appendix_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
