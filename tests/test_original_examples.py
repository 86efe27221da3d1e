"""The original course code's own examples and call shapes run unchanged on the toolkit, and its bugs stay fixed."""
from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import io
import json
import re
import time

import pytest

from toolkit import (ToolExecutor, ToolResult, call_tool_with_retry, evaluate_tool_result, format_tool_message,
                     parse_tool_result, smart_truncate)


def test_seed_usage_example_takes_500_simulated_ms_and_no_real_time(sim_clock, monkeypatch):
    # The seed's tool sleeps with asyncio.sleep itself: route that to the simulated clock.
    monkeypatch.setattr(asyncio, "sleep", sim_clock.sleep)

    # --- the original course code's example, unchanged (inside a coroutine instead of top-level await) ---
    async def mock_search(query):
        await asyncio.sleep(0.5)          # 模拟网络延迟
        return f"搜索结果: {query} 相关内容"

    async def example():
        executor = ToolExecutor()
        result = await executor.execute(mock_search, "search", "Python MCP")

        print(f"工具: {result.name}")
        print(f"成功: {result.error is None}")
        print(f"耗时: {result.duration_ms:.0f}ms")
        print(f"摘要: {executor.get_summary()}")
        return executor, result
    # --- end of the original course code's example ---

    out = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out):
        executor, result = asyncio.run(example())
    assert time.perf_counter() - started < 0.5  # the 0.5 s sleep was not slept
    assert sim_clock.now() == 0.5
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["工具: search", "成功: True", "耗时: 500ms"]
    assert lines[3].startswith("摘要: {'total_calls': 1, 'success_rate': 1.0, 'avg_duration_ms': 500.0")
    assert result.data == "搜索结果: Python MCP 相关内容"


# --- the seed's call shapes -------------------------------------------------------------------------------

def test_seed_tool_result_fields():
    result = ToolResult(name="search", data="晴", error=None, duration_ms=0)
    assert (result.name, result.data, result.error, result.duration_ms) == ("search", "晴", None, 0)


def test_seed_parse_tool_result_call_shapes():
    assert json.loads(parse_tool_result({"城市": "上海"}, max_tokens=2000)) == {"城市": "上海"}
    assert parse_tool_result("晴，25°C") == "晴，25°C"
    assert parse_tool_result(25) == "25"
    assert parse_tool_result({"error": "网络超时"}).startswith("✘ 工具执行失败")
    long_text = "a" * 10_000
    out = parse_tool_result(long_text, max_tokens=2000)
    assert len(out) < len(long_text) and "已省略" in out


def test_seed_smart_truncate_call_shape():
    text = "段落。\n" * 5000
    out = smart_truncate(text, max_chars=8000, keep_head=4000, keep_tail=2000)
    omitted = int(re.search(r"已省略 (\d+) 字符", out).group(1))
    head, tail = out.split("\n\n…")[0], out.split("…\n\n")[-1]
    assert len(head) + omitted + len(tail) == len(text)  # the seed's count was off by the stripped parts


def test_seed_call_tool_with_retry_call_shape(sim_clock):
    calls = []

    async def tool_fn(city, unit="c"):
        calls.append((city, unit))
        if len(calls) == 1:
            raise TimeoutError()
        return f"{city} 25°{unit}"

    result, error = asyncio.run(call_tool_with_retry(tool_fn, "上海", max_retries=3, unit="c"))
    assert (result, error) == ("上海 25°c", None)
    assert calls == [("上海", "c"), ("上海", "c")]


def test_seed_permission_branch_message(sim_clock):
    async def tool_fn():
        raise PermissionError()

    result, error = asyncio.run(call_tool_with_retry(tool_fn, max_retries=3))
    assert result is None and "权限不足" in error


def test_zero_retries_still_returns_a_pair_seed_returned_none(sim_clock):
    async def tool_fn():
        raise TimeoutError()

    result, error = asyncio.run(call_tool_with_retry(tool_fn, max_retries=0))
    assert result is None and "超时" in error


def test_retry_message_counts_retries_truthfully(sim_clock):
    """The seed said "已重试 3 次" after 3 attempts, i.e. 2 retries."""
    async def tool_fn():
        raise TimeoutError()

    _, error = asyncio.run(call_tool_with_retry(tool_fn, max_retries=2))
    assert "共尝试 3 次" in error and "已重试 2 次" in error


def test_seed_format_tool_message_call_shape():
    result = ToolResult("web_search", {"标题": "Python MCP"}, duration_ms=12.0)
    message = format_tool_message("web_search", "call_abc", result)
    assert message["role"] == "tool" and message["tool_call_id"] == "call_abc"
    content = json.loads(message["content"])
    assert {"status", "result", "error", "execution_time_ms"} <= set(content)
    assert content["status"] == "success" and content["execution_time_ms"] == 12.0


def test_format_tool_message_handles_what_broke_the_seed():
    """The seed's json.dumps raised TypeError on a datetime in the data."""
    result = ToolResult("calendar", {"开始": dt.datetime(2024, 5, 1, 9, 0)})
    content = json.loads(format_tool_message("calendar", "c1", result)["content"])
    assert content["result"] == {"开始": "2024-05-01T09:00:00"}


def test_seed_evaluate_tool_result_call_shape():
    assert evaluate_tool_result(ToolResult("search", "晴"), "上海天气")["action"] == "present_directly"
    assert evaluate_tool_result(ToolResult("search", "[]"), "上海天气")["action"] == "retry_with_broader_query"
    assert evaluate_tool_result(ToolResult("search", None, "超时"), "上海天气")["action"] == "report_error"


def test_summarize_keeps_json_valid_where_the_seed_cut_at_3000_characters():
    data = {"rows": [{"id": i, "名称": f"商品{i}"} for i in range(500)]}
    decision = evaluate_tool_result(ToolResult("db", data), "列出商品")
    assert decision["action"] == "summarize_and_present"
    json.loads(decision["data"])


def test_seed_executor_call_shape_and_its_fixed_bugs(sim_clock):
    executor = ToolExecutor(max_retries=3, result_max_chars=8000)
    attempts = []

    async def denied():
        attempts.append(1)
        raise PermissionError("no")

    async def big():
        return {"rows": list(range(10_000))}

    async def main():
        return await executor.execute(denied, "denied"), await executor.execute(big, "big")

    denied_result, big_result = asyncio.run(main())
    assert attempts == [1]  # the seed retried PermissionError and slept 1 s + 2 s for nothing
    assert denied_result.error is not None
    json.loads(json.dumps(big_result.data))  # the seed cut str(dict) into non-JSON text
    assert len(json.dumps(big_result.data, ensure_ascii=False)) <= 8000
    assert set(executor.get_summary()) >= {"total_calls", "success_rate", "avg_duration_ms"}
    assert len(executor.call_history) == 2


@pytest.mark.parametrize("value", [0, False])
def test_zero_and_false_are_answers_seed_said_empty(value):
    assert evaluate_tool_result(ToolResult("count", value), "有几个？")["action"] == "present_directly"
