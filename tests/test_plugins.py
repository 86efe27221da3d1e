"""ToolExecutor's plug-in points: a student's parse, truncate or retry in place of the toolkit's.

A working plug-in changes ToolResult.data; one that raises or returns the wrong
type gives an error ToolResult with error_code PLUGIN_ERROR naming it, never an exception.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from toolkit import ToolExecutor, ToolRegistry, inject_faults

LONG = "第一行开头\n" + "中间的内容 " * 400 + "\n最后一行结尾"


def run(coro):
    return asyncio.run(coro)


def long_text() -> str:
    return LONG


def records() -> list[dict]:
    return [{"id": i, "name": f"商品{i}", "price": i * 10} for i in range(200)]


def assert_plugin_error(result, plugin: str) -> None:
    assert result.status == "error" and result.error_code == "PLUGIN_ERROR"
    assert plugin in result.error and "插件" in result.error
    assert result.data is None


# --- parse ------------------------------------------------------------------------------------------------------

def test_a_working_parse_decides_the_data(sim_clock):
    def parse(raw, max_chars):
        return {"rows": len(raw), "first": raw[0]}
    result = run(ToolExecutor(parse=parse).execute(records, "rows"))
    assert result.ok and result.data == {"rows": 200, "first": {"id": 0, "name": "商品0", "price": 0}}
    assert result.truncated and result.artifact == records()


def test_parse_output_is_still_redacted(sim_clock):
    result = run(ToolExecutor(parse=lambda raw, n: raw).execute(lambda: "key sk-abcdefghijklmnop123", "t"))
    assert "abcdefghijklmnop" not in json.dumps(result.data)


@pytest.mark.parametrize("parse, words", [
    (lambda raw, n: raw["missing"], "TypeError"),        # raises
    (lambda raw, n: {1, 2, 3}, "set"),                    # not JSON-serializable
    (lambda raw, n: "x" * (n + 1), "字符"),               # over the budget
    (lambda raw, n: object(), "object"),
])
def test_a_broken_parse_is_a_plugin_error_result(sim_clock, parse, words):
    result = run(ToolExecutor(parse=parse, result_max_chars=100).execute(records, "rows"))
    assert_plugin_error(result, "parse")
    assert words in result.error


def test_an_async_parse_is_refused_without_a_never_awaited_warning(sim_clock, recwarn):
    async def parse(raw, n):
        return raw
    assert_plugin_error(run(ToolExecutor(parse=parse).execute(records, "rows")), "parse")
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


# --- truncate ---------------------------------------------------------------------------------------------------

def test_a_working_truncate_cuts_long_text(sim_clock):
    result = run(ToolExecutor(truncate=lambda text, n: text[:n], result_max_chars=50).execute(long_text, "t"))
    assert result.ok and result.data == LONG[:50] and result.truncated


def test_truncate_is_not_called_for_text_within_the_budget(sim_clock):
    calls = []
    executor = ToolExecutor(truncate=lambda text, n: calls.append(text) or text[:n])
    assert run(executor.execute(lambda: "短", "t")).data == "短" and calls == []


@pytest.mark.parametrize("truncate, words", [
    (lambda text, n: text[n * 1000], "IndexError"),
    (lambda text, n: None, "NoneType"),
    (lambda text, n: text, "字符"),                      # did not cut
    (lambda text, n: [text[:n]], "list"),
])
def test_a_broken_truncate_is_a_plugin_error_result(sim_clock, truncate, words):
    result = run(ToolExecutor(truncate=truncate, result_max_chars=50).execute(long_text, "t"))
    assert_plugin_error(result, "truncate")
    assert words in result.error


# --- retry ------------------------------------------------------------------------------------------------------

def original_shape_retry(tool_fn, *args, max_retries=3, **kwargs):
    """A student's sync retry in the original course code's shape."""
    error = None
    for _ in range(max_retries + 1):
        try:
            return tool_fn(*args, **kwargs), None
        except Exception as exc:  # the naive version: retries everything
            error = f"失败：{exc}"
    return None, error


def test_a_working_sync_retry_replaces_call_tool_with_retry(sim_clock):
    def tagging_retry(tool_fn, *args, max_retries=3, **kwargs):
        result, error = original_shape_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        return f"学生版：{result}", error
    flaky = FlakySync(2, value="晴")
    result = run(ToolExecutor(retry=tagging_retry).execute(flaky, "weather", "上海"))
    assert result.ok and result.data == "学生版：晴" and flaky.calls == 3
    assert result.attempts == 3 and [a.outcome for a in result.trace] == ["error", "error", "ok"]


def test_a_working_async_retry_with_waits_on_the_clock(sim_clock):
    async def retry(tool_fn, *args, max_retries=3, **kwargs):
        for n in range(max_retries + 1):
            try:
                return await tool_fn(*args, **kwargs), None
            except Exception as exc:
                last = str(exc)
                await sim_clock.sleep(2 ** n)
        return None, last

    async def weather(city):
        return f"{city}：晴"
    flaky = inject_faults(weather, ["timeout", "ok"], latency=0.5)
    result = run(ToolExecutor(retry=retry, max_retries=2).execute(flaky, "weather", "上海"))
    assert result.ok and result.data == "上海：晴" and result.attempts == 2
    assert result.trace[0].wait_after == 1.0  # the gap between the attempts, on the simulated clock


def test_a_retry_returning_an_error_keeps_the_tools_error_kind(sim_clock):
    flaky = FlakySync(10)
    result = run(ToolExecutor(retry=original_shape_retry, max_retries=1).execute(flaky, "weather", "上海"))
    assert result.status == "error" and result.error.startswith("失败：") and result.error_code == "CONNECTION"
    assert flaky.calls == 2


def test_a_tools_error_envelope_stays_an_error_whatever_the_retry_says(sim_clock):
    """A retry that hands the tool's {"status": "error"} back as a success does not make it one: the tool said
    it failed, and the model must read that (the capstone's sample retry did exactly this)."""
    def envelope():
        return {"status": "error", "error": {"code": "INVALID_SALES_CSV", "message": "第 4 行数量不是整数", "line": 4}}

    def naive_retry(tool_fn, *args, max_retries=3, **kwargs):
        return tool_fn(*args, **kwargs), None

    result = run(ToolExecutor(retry=naive_retry).execute(envelope, "analyze_sales_csv"))
    assert result.status == "error" and result.error_code == "INVALID_SALES_CSV"
    assert "第 4 行" in result.error and result.data == {"line": 4}


@pytest.mark.parametrize("retry, words", [
    (lambda tool_fn, *a, max_retries=3, **k: tool_fn(*a, **k), "str"),             # not a pair
    (lambda tool_fn, *a, max_retries=3, **k: ("ok", 404), "int"),                  # error not a str
    (lambda tool_fn, *a, max_retries=3, **k: (_ for _ in ()).throw(KeyError("x")), "KeyError"),
    (lambda tool_fn, *a, **k: (tool_fn(*a, **k), None), "max_retries"),         # wrong signature
])
def test_a_broken_retry_is_a_plugin_error_result(sim_clock, retry, words):
    result = run(ToolExecutor(retry=retry).execute(lambda city: f"{city}：晴", "weather", "上海"))
    assert_plugin_error(result, "retry")
    assert words in result.error


def test_a_retry_that_lets_the_tools_error_escape_is_a_plugin_error(sim_clock):
    def no_catch(tool_fn, *args, max_retries=3, **kwargs):
        return tool_fn(*args, **kwargs), None
    result = run(ToolExecutor(retry=no_catch).execute(FlakySync(1), "weather", "上海"))
    assert_plugin_error(result, "retry")
    assert "ConnectionError" in result.error


def test_a_sync_retry_around_an_async_tool_is_told_to_await(sim_clock, recwarn):
    async def weather(city):
        return city
    result = run(ToolExecutor(retry=original_shape_retry).execute(weather, "weather", "上海"))
    assert_plugin_error(result, "retry")
    assert "await" in result.error
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_plugins_work_through_the_registry_and_a_batch(sim_clock):
    registry = ToolRegistry()
    registry.register(lambda tool_fn: f"参数 {tool_fn}", name="echo",
                      parameters={"type": "object", "properties": {"tool_fn": {"type": "string"}}})
    executor = ToolExecutor(registry=registry, retry=original_shape_retry, parse=lambda raw, n: raw.upper())
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "echo", "arguments": json.dumps({"tool_fn": f"x{i}"})}}
             for i in range(3)]
    results = run(executor.run_tool_calls(calls))
    assert [r.data for r in results] == ["参数 X0", "参数 X1", "参数 X2"]


def test_a_plugin_that_is_not_callable_is_refused_at_construction():
    with pytest.raises(ValueError, match="parse"):
        ToolExecutor(parse="smart_truncate")


class FlakySync:
    """A sync tool: raises ConnectionError `failures` times, then returns `value`."""

    def __init__(self, failures: int, value: str = "ok") -> None:
        self.failures, self.value, self.calls = failures, value, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("连接被重置")
        return self.value
