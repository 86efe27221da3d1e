"""Tests for toolkit.executor: execute, budgets, history, summary, parallel calls, registry, breaker, audit."""
from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys

import pytest

from toolkit import (CircuitBreaker, HTTPStatusError, PartialResult, RetryBudget, RetryPolicy, Tool, ToolExecutor,
                     ToolRegistry, ToolResult, dumps, format_tool_message, inject_faults, parse_tool_call)
from toolkit.wire import ToolCall
from support import Flaky


def run(coro):
    return asyncio.run(coro)


def openai_call(call_id: str, name: str, arguments) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


# --- execute --------------------------------------------------------------------------------------------

def test_execute_runs_an_async_tool_with_the_seed_call_shape(sim_clock):
    async def search(query):
        await sim_clock.sleep(0.5)
        return f"搜索结果: {query} 相关内容"

    executor = ToolExecutor()
    result = run(executor.execute(search, "search", "Python MCP"))
    assert result.name == "search"
    assert result.error is None and result.ok
    assert result.data == "搜索结果: Python MCP 相关内容"
    assert result.duration_ms == 500.0
    assert result.attempts == 1


def test_execute_runs_a_sync_tool_with_keyword_arguments(sim_clock):
    def add(a, b=0):
        return {"sum": a + b}

    result = run(ToolExecutor().execute(add, "add", 2, b=3))
    assert result.data == {"sum": 5} and result.ok


def test_execute_retries_only_retryable_errors(sim_clock):
    executor = ToolExecutor(max_retries=3)
    flaky = Flaky(TimeoutError(), ConnectionError(), value="好了")
    result = run(executor.execute(flaky, "flaky"))
    assert result.ok and result.data == "好了"
    assert flaky.calls == 3 and result.attempts == 3 and result.retries == 2
    denied = Flaky(PermissionError("denied"))
    result = run(executor.execute(denied, "denied"))
    assert denied.calls == 1
    assert result.error_type == "fatal" and result.error_code == "PERMISSION_DENIED"
    assert result.data is None


def test_execute_gives_up_after_max_retries(sim_clock):
    tool = Flaky(*[TimeoutError()] * 10)
    result = run(ToolExecutor(max_retries=2).execute(tool, "slow"))
    assert tool.calls == 3
    assert result.error_type == "retryable" and result.error_code == "TIMEOUT"
    assert "共尝试 3 次" in result.error


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_execute_lets_interrupts_through(sim_clock, exc_type):
    tool = Flaky(exc_type())
    with pytest.raises(exc_type):
        run(ToolExecutor().execute(tool, "t"))
    assert tool.calls == 1


def test_execute_never_raises_for_tool_errors(sim_clock):
    result = run(ToolExecutor().execute(Flaky(RuntimeError("bug in tool")), "buggy"))
    assert result.error_type == "fatal" and "bug in tool" in result.error


def test_partial_result_keeps_data_and_what_is_missing(sim_clock):
    tool = Flaky(value=PartialResult({"上海": "晴"}, "北京超时"))
    result = run(ToolExecutor().execute(tool, "weather"))
    assert result.status == "partial"
    assert result.data == {"上海": "晴"}
    assert result.missing == "北京超时"


def test_error_envelope_is_shown_to_the_model(sim_clock):
    envelope = {"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到 sales.csv"}}
    result = run(ToolExecutor().execute(Flaky(value=envelope), "sales"))
    assert result.error_type == "fatal" and result.error_code == "FILE_NOT_FOUND"
    assert result.data is None and result.error == "找不到 sales.csv"  # the envelope is opened once, here


_VALUES = {
    "short": "晴，25°C",
    "exact": "x" * 200,
    "long_text": "\n".join(f"第{i}行" for i in range(5000)),
    "quotes": 'say "hi" ' * 500,
    "controls": "\x00\x01\x02" * 1000,
    "json_text": json.dumps([{"id": i, "q": 'a"b'} for i in range(500)]),
    "big_dict": {"rows": [{"id": i, "name": f"商品{i}"} for i in range(1000)]},
    "bytes": b"abc" * 1000,
    "set": set(range(1000)),
    "nested": [[[[["deep"] * 50] * 5] * 5] * 5],
}


@pytest.mark.parametrize("name", list(_VALUES))
def test_data_is_json_within_result_max_chars_and_artifact_is_whole(sim_clock, name):
    value = _VALUES[name]
    result = run(ToolExecutor(result_max_chars=200).execute(Flaky(value=value), "t"))
    text = dumps(result.data)
    assert len(text) <= 200
    json.loads(text)
    assert result.artifact is value
    fits = len(dumps(value)) <= 200 if not isinstance(value, (bytes, set)) else False
    assert result.truncated is (not fits)


def test_data_that_fits_is_unchanged(sim_clock):
    value = {"城市": "上海", "温度": [20, 25]}
    result = run(ToolExecutor().execute(Flaky(value=value), "t"))
    assert result.data == value and result.truncated is False


def test_truncated_text_keeps_head_and_tail(sim_clock):
    text = "\n".join(f"line {i}" for i in range(10_000))
    result = run(ToolExecutor(result_max_chars=1000).execute(Flaky(value=text), "t"))
    assert result.data.startswith("line 0\n") and result.data.endswith("line 9999")
    assert "已省略" in result.data


@pytest.mark.parametrize("kwargs", [{"result_max_chars": 10}, {"result_max_chars": 1.5}, {"concurrency": 0}])
def test_bad_executor_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        ToolExecutor(**kwargs)


# --- history and summary -----------------------------------------------------------------------------------

def test_call_history_and_summary(sim_clock):
    executor = ToolExecutor(max_retries=3)

    async def slow(seconds, value):
        await sim_clock.sleep(seconds)
        return value

    async def main():
        await executor.execute(slow, "slow", 0.2, "a")
        await executor.execute(slow, "slow", 0.4, "b")
        await executor.execute(Flaky(TimeoutError(), value="c"), "flaky")
        await executor.execute(Flaky(PermissionError()), "denied")

    run(main())
    history = list(executor.call_history)
    assert [r.name for r in history] == ["slow", "slow", "flaky", "denied"]
    summary = executor.get_summary()
    assert summary["total_calls"] == 4
    assert summary["success_rate"] == 0.75
    durations = [r.duration_ms for r in history]
    assert summary["avg_duration_ms"] == round(sum(durations) / 4, 1)
    assert durations[:2] == pytest.approx([200.0, 400.0])
    assert summary["retries"] == 1
    assert summary["failed"] == 1
    assert summary["per_tool"]["slow"] == {"calls": 2, "success": 2, "partial": 0, "failed": 0, "retries": 0}
    assert summary["per_tool"]["denied"]["failed"] == 1


def test_empty_summary_has_zero_rates():
    summary = ToolExecutor().get_summary()
    assert summary["total_calls"] == 0 and summary["success_rate"] == 0 and summary["avg_duration_ms"] == 0


def test_history_limit_keeps_the_latest_but_statistics_count_all(sim_clock):
    executor = ToolExecutor(history_limit=3)

    async def main():
        for i in range(5):
            await executor.execute(Flaky(value=i), f"t{i}")

    run(main())
    assert [r.data for r in executor.call_history] == [2, 3, 4]
    assert executor.get_summary()["total_calls"] == 5


def test_reset_forgets_everything(sim_clock):
    executor = ToolExecutor()
    run(executor.execute(Flaky(), "t"))
    executor.reset()
    assert list(executor.call_history) == [] and executor.get_summary()["total_calls"] == 0


# --- the registry -------------------------------------------------------------------------------------------

def test_schema_is_built_from_the_signature():
    registry = ToolRegistry()

    @registry.register
    def get_weather(city: str, days: int = 1, detail: bool = False, ratio: float = 1.0,
                    tags: list = (), extra: dict | None = None, *rest, **more) -> dict:
        """查询城市天气。"""
        return {}

    tool = registry.get("get_weather")
    assert tool.description == "查询城市天气。"
    assert tool.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "detail": {"type": "boolean"},
                       "ratio": {"type": "number"}, "tags": {"type": "array"}, "extra": {}},
        "required": ["city"], "additionalProperties": False}
    assert registry.openai_tools() == [{"type": "function", "function": {
        "name": "get_weather", "description": "查询城市天气。", "parameters": tool.parameters}}]
    assert registry.tools("anthropic") == [{"name": "get_weather", "description": "查询城市天气。",
                                           "input_schema": tool.parameters}]


def test_register_accepts_a_name_schema_and_kind():
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    registry.register(lambda q: q, name="search", description="搜索", parameters=schema, kind="query")
    assert "search" in registry and len(registry) == 1 and registry.names == ["search"]
    assert registry.get("search").kind == "query"
    assert registry.get("missing") is None


def test_registry_accepts_tools_and_iterates_them():
    tools = [Tool("a", print, "A", {"type": "object"}), Tool("b", print, "B", {"type": "object"})]
    registry = ToolRegistry(tools)
    assert [t.name for t in registry] == ["a", "b"]


def test_a_broken_schema_is_reported_as_the_tool_authors_bug(sim_clock):
    registry = ToolRegistry([Tool("bad", lambda **kw: 1, "坏的定义", {"type": "no-such-type"})])
    result = run(ToolExecutor(registry=registry).run_tool_call(openai_call("c", "bad", {})))
    assert result.error_code == "BAD_TOOL_SCHEMA" and "参数定义有误" in result.error


def test_a_tool_needs_a_name():
    with pytest.raises(ValueError):
        ToolRegistry().add(Tool("", print, "d", {}))


@pytest.mark.parametrize("raw, expected", [
    (openai_call("c1", "f", {"a": 1}), ToolCall("c1", "f", '{"a": 1}')),
    ({"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}, ToolCall("c2", "f", "{}")),
    ({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}, ToolCall("toolu_1", "f", {"a": 1})),
    ({}, ToolCall(None, "", None)),
    (None, ToolCall(None, "", None)),
])
def test_parse_tool_call_normalizes_every_wire_format(raw, expected):
    assert parse_tool_call(raw) == expected


# --- model tool calls ---------------------------------------------------------------------------------------------

def _registry(sim_clock, latency: float = 0.1) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def search(query: str, limit: int = 3) -> str:
        """搜索。"""
        await sim_clock.sleep(latency)
        if query == "boom":
            raise PermissionError("这个查询没有权限")
        return f"{query}:{limit}"

    return registry


def test_fifty_calls_ten_at_a_time_take_half_a_second(sim_clock):
    registry = ToolRegistry()
    active, peak = [0], [0]

    @registry.register
    async def search(query: str) -> str:
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await sim_clock.sleep(0.1)
        active[0] -= 1
        return query

    executor = ToolExecutor(registry=registry, concurrency=10)
    calls = [openai_call(f"call_{i}", "search", {"query": f"q{i}"}) for i in range(50)]
    results = run(executor.run_tool_calls(calls))
    assert sim_clock.now() == pytest.approx(0.5)
    assert peak[0] == 10
    assert [r.call_id for r in results] == [f"call_{i}" for i in range(50)]
    assert [r.data for r in results] == [f"q{i}" for i in range(50)]


def test_one_failing_call_never_fails_the_batch(sim_clock):
    executor = ToolExecutor(registry=_registry(sim_clock))
    calls = [openai_call("a", "search", {"query": "上海"}),
             openai_call("b", "search", {"query": "boom"}),
             openai_call("c", "nope", {}),
             openai_call("d", "search", "{not json"),
             openai_call("e", "search", {"query": 42}),
             openai_call("f", "search", {"query": "x", "unexpected": 1}),
             openai_call("g", "search", ""),
             openai_call("h", "search", "[1, 2]"),
             {"type": "tool_use", "id": "i", "name": "search", "input": {"query": "北京", "limit": 1}}]
    results = run(executor.run_tool_calls(calls))
    assert [r.call_id for r in results] == list("abcdefghi")
    codes = [r.error_code for r in results]
    assert codes == [None, "PERMISSION_DENIED", "UNKNOWN_TOOL", "INVALID_ARGUMENTS_JSON", "INVALID_ARGUMENTS",
                     "INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS", None]
    assert results[0].data == "上海:3" and results[-1].data == "北京:1"
    assert "search" in results[2].error  # tells the model which tools exist
    assert "query" in results[4].error
    assert all(r.error_type == "fatal" for r in results[1:-1])


def test_empty_batch_gives_no_results(sim_clock):
    assert run(ToolExecutor().run_tool_calls([])) == []


def test_write_tools_are_not_retried_after_a_timeout(sim_clock):
    registry = ToolRegistry()
    attempts = []

    def place_order(item: str, idempotency_key: str = "") -> dict:
        attempts.append(item)
        raise TimeoutError("no answer")

    registry.register(place_order, writes=True)
    executor = ToolExecutor(registry=registry)
    result = run(executor.run_tool_call(openai_call("w1", "place_order", {"item": "书"})))
    assert len(attempts) == 1 and "写操作" in result.error
    attempts.clear()
    run(executor.run_tool_call(openai_call("w2", "place_order", {"item": "书", "idempotency_key": "k1"})))
    assert len(attempts) == 4  # a key makes the retry safe


def test_query_kind_shapes_the_data(sim_clock):
    registry = ToolRegistry()
    registry.register(lambda: [{"amount": i} for i in range(1000)], name="rows", kind="query",
                      parameters={"type": "object", "properties": {}})
    result = run(ToolExecutor(registry=registry, result_max_chars=600).run_tool_call(openai_call("q", "rows", {})))
    assert result.data["row_count"] == 1000
    assert result.data["stats"]["amount"]["max"] == 999
    assert len(dumps(result.data)) <= 600


# --- circuit breaker ----------------------------------------------------------------------------------------------

def test_circuit_opens_fails_fast_and_half_opens_after_the_cooldown(sim_clock):
    down = Flaky(*[ConnectionError("down")] * 3)
    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), breaker=CircuitBreaker(failure_threshold=3,
                                                                                      cooldown=30))

    async def call():
        return await executor.execute(down, "flaky_api")

    results = [run(call()) for _ in range(3)]
    assert [r.error_code for r in results] == ["CONNECTION"] * 3
    assert executor.breaker.state("flaky_api", sim_clock.now()) == "open"
    fast = run(call())
    assert fast.error_code == "CIRCUIT_OPEN" and fast.attempts == 0
    assert down.calls == 3  # the tool was not called
    assert "熔断" in fast.error
    sim_clock.advance(30)
    assert executor.breaker.state("flaky_api", sim_clock.now()) == "half_open"
    trial = run(call())  # the plan is used up: the trial succeeds
    assert trial.ok and down.calls == 4
    assert executor.breaker.state("flaky_api", sim_clock.now()) == "closed"


def test_failed_trial_opens_the_circuit_again(sim_clock):
    down = Flaky(*[HTTPStatusError(503)] * 10)
    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), breaker=CircuitBreaker(failure_threshold=2,
                                                                                      cooldown=10))
    for _ in range(2):
        run(executor.execute(down, "api"))
    sim_clock.advance(10)
    assert run(executor.execute(down, "api")).error_code == "UNAVAILABLE"
    assert run(executor.execute(down, "api")).error_code == "CIRCUIT_OPEN"


def test_fatal_errors_do_not_open_the_circuit(sim_clock):
    denied = Flaky(*[PermissionError()] * 10)
    executor = ToolExecutor(breaker=CircuitBreaker(failure_threshold=2))
    codes = [run(executor.execute(denied, "t")).error_code for _ in range(4)]
    assert codes == ["PERMISSION_DENIED"] * 4


def test_open_circuit_uses_the_registered_fallback(sim_clock):
    registry = ToolRegistry()
    primary_calls = []

    def weather(city: str) -> str:
        primary_calls.append(city)
        raise ConnectionError("primary down")

    registry.register(weather, fallback="weather_backup")
    registry.register(lambda city: f"{city}: 晴（备用源）", name="weather_backup",
                      parameters={"type": "object", "properties": {"city": {"type": "string"}}})
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=0),
                            breaker=CircuitBreaker(failure_threshold=2, cooldown=60))
    results = [run(executor.run_tool_call(openai_call(f"c{i}", "weather", {"city": "上海"}))) for i in range(3)]
    assert [r.error_code for r in results[:2]] == ["CONNECTION", "CONNECTION"]
    assert results[2].ok and results[2].name == "weather_backup"
    assert results[2].data == "上海: 晴（备用源）"
    assert results[2].call_id == "c2"
    assert len(primary_calls) == 2
    content = json.loads(format_tool_message("weather", "c2", results[2])["content"])
    assert "熔断" in content["note"] and "weather_backup" in content["note"]  # the model is told


# --- audit ----------------------------------------------------------------------------------------------------------

_AUDIT_FIELDS = {"task_id", "tool", "call_id", "arguments", "status", "error_type", "error_code", "error",
                 "source", "result_summary", "attempts", "duration_ms", "started_at"}


def test_audit_records_have_every_field_and_no_secrets(sim_clock):
    registry = ToolRegistry()
    registry.register(lambda token, city: {"city": city, "source": "weather.json"}, name="weather",
                      parameters={"type": "object"})
    executor = ToolExecutor(registry=registry)
    run(executor.run_tool_call(openai_call("c1", "weather", {"token": "sk-" + "abcdefghijklmnopqrstuvwxyz",
                                                             "city": "上海"})))
    run(executor.execute(Flaky(PermissionError("denied")), "denied"))
    records = executor.audit_records(task_id="task-1")
    assert len(records) == 2
    first, second = records
    assert set(first) >= _AUDIT_FIELDS
    assert first["task_id"] == "task-1" and first["tool"] == "weather" and first["call_id"] == "c1"
    assert first["status"] == "success" and first["source"] == "weather.json"
    assert "abcdefghijklmnop" not in json.dumps(records, ensure_ascii=False)
    assert "上海" in first["arguments"]
    assert second["status"] == "error" and second["error_code"] == "PERMISSION_DENIED"
    assert second["attempts"] == 1


def test_export_jsonl_writes_one_line_per_call(sim_clock):
    executor = ToolExecutor()
    run(executor.execute(Flaky(value="晴"), "weather"))
    run(executor.execute(Flaky(value="雨"), "weather"))
    out = io.StringIO()
    assert executor.export_jsonl(out, task_id="t") == 2
    lines = out.getvalue().splitlines()
    summaries = [json.loads(line)["result_summary"] for line in lines]
    assert "晴" in summaries[0] and "雨" in summaries[1]
    assert "晴" in lines[0]  # Chinese readable in the log


def test_executor_has_one_way_to_observe_calls_hooks(sim_clock):
    executor = ToolExecutor()
    seen = []
    executor.hooks.append(lambda e: seen.append(e.result.name) if e.kind == "call_end" else None)
    run(executor.execute(Flaky(), "t"))
    assert seen == ["t"] and not hasattr(executor, "listeners")


def test_executor_budget_is_shared_by_all_calls(sim_clock):
    budget = RetryBudget(capacity=5, retry_cost=5)
    executor = ToolExecutor(max_retries=3, budget=budget)
    first = run(executor.execute(Flaky(*[ConnectionError()] * 10), "a"))
    second = run(executor.execute(Flaky(*[ConnectionError()] * 10), "b"))
    assert (first.attempts, second.attempts) == (2, 1)  # one retry bought, then the bucket is empty


def test_faulty_tool_through_the_executor(sim_clock):
    tool = inject_faults(lambda: "ok", plan=["timeout", "rate_limit", "ok"], retry_after=2)
    result = run(ToolExecutor().execute(tool, "api"))
    assert result.ok and result.attempts == 3
    assert result.trace[1].wait_after >= 2


def test_half_open_lets_only_one_trial_through(sim_clock):
    calls = []

    async def api():
        calls.append(sim_clock.now())
        await sim_clock.sleep(0.1)
        if len(calls) <= 2:
            raise ConnectionError("down")
        return "up"

    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), breaker=CircuitBreaker(failure_threshold=2,
                                                                                      cooldown=5))
    for _ in range(2):
        run(executor.execute(api, "api"))
    sim_clock.advance(5)

    async def burst():
        return await asyncio.gather(*(executor.execute(api, "api") for _ in range(3)))

    results = run(burst())
    assert sorted(r.error_code or "ok" for r in results) == ["CIRCUIT_OPEN", "CIRCUIT_OPEN", "ok"]
    assert len(calls) == 3


def test_each_tool_has_its_own_circuit(sim_clock):
    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), breaker=CircuitBreaker(failure_threshold=1))
    run(executor.execute(Flaky(ConnectionError()), "a"))
    assert run(executor.execute(Flaky(ConnectionError()), "a")).error_code == "CIRCUIT_OPEN"
    assert run(executor.execute(Flaky(value=1), "b")).ok


def test_schema_validator_is_built_once_per_tool():
    registry = ToolRegistry()
    registry.register(lambda city: city, name="weather",
                      parameters={"type": "object", "properties": {"city": {"type": "string"}}})
    tool = registry.get("weather")
    assert registry.check_arguments(tool, {"city": "上海"}) == ({"city": "上海"}, None)
    first = registry._validator(tool)
    assert registry.check_arguments(tool, {"city": 1})[1].error_code == "INVALID_ARGUMENTS"
    assert registry._validator(tool) is first
    registry.register(lambda city: city, name="weather", parameters={"type": "object"})  # replaced
    assert registry._validator(registry.get("weather")) is not first


def test_first_schema_check_skips_the_iri_grammar_but_leaves_it_importable():
    code = ("import sys, importlib.util\n"
            "from toolkit.schemas import _jsonschema\n"
            "_jsonschema()\n"
            "assert 'rfc3987_syntax' not in sys.modules\n"
            "if importlib.util.find_spec('rfc3987_syntax'):\n"
            "    import rfc3987_syntax\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


# --- no reserved argument names (issue 9.12) --------------------------------------------------------------------

def test_a_tool_with_parameters_named_like_retry_settings_runs_through_the_registry(sim_clock):
    registry = ToolRegistry()

    def configure(tool_fn: str, policy: str, max_retries: int, on_attempt: str, clock: str) -> str:
        return f"{tool_fn}|{policy}|{max_retries}|{on_attempt}|{clock}"
    registry.register(configure)
    arguments = {"tool_fn": "a", "policy": "b", "max_retries": 9, "on_attempt": "c", "clock": "d"}
    executor = ToolExecutor(registry=registry)
    single = run(executor.run_tool_call(openai_call("c1", "configure", arguments)))
    assert single.ok and single.data == "a|b|9|c|d"
    batch = run(executor.run_tool_calls([openai_call(f"b{i}", "configure", arguments) for i in range(3)]))
    assert [r.status for r in batch] == ["success"] * 3 and {r.data for r in batch} == {"a|b|9|c|d"}


def test_execute_passes_a_keyword_named_tool_fn_to_the_tool(sim_clock):
    result = run(ToolExecutor().execute(lambda tool_fn: f"got {tool_fn}", "t", tool_fn="x"))
    assert result.ok and result.data == "got x"


# --- one truth for success, one enum for codes (issue 8.7) ---------------------------------------------------------

def test_error_codes_are_one_str_enum_that_still_compares_as_text(sim_clock):
    from toolkit import ErrorCode
    result = run(ToolExecutor(max_retries=0).execute(Flaky(TimeoutError()), "t"))
    assert result.error_code is ErrorCode.TIMEOUT and result.error_code == "TIMEOUT"
    assert json.dumps({"code": result.error_code}) == '{"code": "TIMEOUT"}' and f"{result.error_code}" == "TIMEOUT"
    refused = run(ToolExecutor().run_tool_call(openai_call("c", "nope", {})))
    assert refused.error_code is ErrorCode.UNKNOWN_TOOL


def test_status_decides_and_a_partial_result_with_an_error_text_is_not_a_failure(sim_clock):
    executor = ToolExecutor()
    partial = run(executor.execute(lambda: PartialResult([1], "第二页超时"), "p"))
    assert partial.error is not None and partial.status == "partial" and not partial.ok
    run(executor.execute(Flaky(PermissionError()), "p"))
    summary = executor.get_summary()["per_tool"]["p"]
    assert (summary["partial"], summary["failed"], summary["success"]) == (1, 1, 0)
    assert ToolResult("t", None, "坏了").status == "error"  # an error text without a type is an error
