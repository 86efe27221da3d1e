"""The audit log (chapter 07's traceability rule): one JSON line per tool call, bounded in memory.

Each line holds the task id, tool name, argument summary, status, error type,
source, result summary and duration; no secrets. History keeps the last
`history_limit` calls, while get_summary still counts every call.
"""
from __future__ import annotations

import asyncio
import io
import json
import gc

import pytest

from toolkit import RetryPolicy, SimulatedClock, ToolExecutor, ToolResult, inject_faults, use_clock

AUDIT_FIELDS = {"task_id", "tool", "call_id", "arguments", "status", "error_type", "error_code", "error",
                "source", "result_summary", "attempts", "duration_ms", "started_at"}


def _sales_run() -> ToolExecutor:
    tools = pytest.importorskip("toolkit.tools")
    registry = tools.default_registry()
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=2))
    calls = [
        {"id": "call_ok", "function": {"name": "analyze_sales_csv", "arguments": "{}"}},
        {"id": "call_missing", "function": {"name": "analyze_sales_csv", "arguments": '{"path": "nope.csv"}'}},
        {"id": "call_unknown", "function": {"name": "drop_table", "arguments": "{}"}},
    ]
    with use_clock(SimulatedClock(seed=0)):
        asyncio.run(executor.run_tool_calls(calls))
    return executor


def test_audit_log_is_json_lines_with_the_fields_seed_003_asks_for() -> None:
    executor = _sales_run()
    buffer = io.StringIO()
    count = executor.export_jsonl(buffer, task_id="task-42")
    lines = buffer.getvalue().splitlines()
    assert count == len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert all(set(r) == AUDIT_FIELDS for r in records)
    assert all(r["task_id"] == "task-42" for r in records)
    ok, missing, unknown = records
    assert (ok["tool"], ok["call_id"], ok["status"], ok["error_type"]) == ("analyze_sales_csv", "call_ok", "success", None)
    assert ok["source"] == ["data/input/sales.csv"]
    assert "9692" in ok["result_summary"] and len(ok["result_summary"]) <= 200
    assert missing["status"] == "error" and missing["error_type"] == "fatal" and missing["error_code"]
    assert "nope.csv" in missing["arguments"]
    assert unknown["tool"] == "drop_table" and unknown["error_code"] == "UNKNOWN_TOOL" and unknown["attempts"] == 0
    assert all(isinstance(r["duration_ms"], (int, float)) and r["duration_ms"] >= 0 for r in records)


def test_audit_log_keeps_chinese_readable() -> None:
    executor = _sales_run()
    buffer = io.StringIO()
    executor.export_jsonl(buffer)
    assert "显示器" in buffer.getvalue() and "\\u" not in buffer.getvalue()


def test_audit_records_durations_and_attempts_of_retried_calls() -> None:
    async def search(query: str) -> str:
        return f"{query} 的结果"

    flaky = inject_faults(search, ["timeout", "ok"], latency=0.5)
    executor = ToolExecutor(policy=RetryPolicy(max_retries=2))
    with use_clock(SimulatedClock(seed=0)):
        asyncio.run(executor.execute(flaky, "search", "上海天气"))
    (record,) = executor.audit_records(task_id="t")
    assert record["attempts"] == 2 and record["status"] == "success"
    assert record["duration_ms"] >= 1000.0          # two 0.5 s attempts plus the backoff wait
    assert record["arguments"] == "上海天气"


def _alive(cls: type) -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if type(obj) is cls)


def test_history_stays_bounded_over_100k_calls_while_the_summary_counts_all() -> None:
    limit, total = 1000, 100_000

    def lookup(i: int) -> dict:
        if i % 10 == 0:
            raise PermissionError(f"第 {i} 行无权访问")
        return {"i": i, "source": "data/input/sales.csv"}

    executor = ToolExecutor(history_limit=limit, policy=RetryPolicy(max_retries=0))

    async def run(start: int, stop: int) -> None:
        for i in range(start, stop):
            await executor.execute(lookup, "lookup", i)

    elsewhere = _alive(ToolResult)  # results other tests of the session still hold (module constants, fixtures)
    with use_clock(SimulatedClock(seed=0)):
        asyncio.run(run(0, 20_000))
        kept_before = _alive(ToolResult) - elsewhere
        asyncio.run(run(20_000, total))
        kept_after = _alive(ToolResult) - elsewhere
    summary = executor.get_summary()
    print(f"\n{total} calls, history_limit={limit}: history {len(executor.call_history)}, "
          f"ToolResult objects alive after 20,000 calls {kept_before}, after {total} {kept_after}; "
          f"summary counts {summary['total_calls']}")
    assert len(executor.call_history) == limit
    assert summary["total_calls"] == total
    assert summary["failed"] == total // 10 and summary["per_tool"]["lookup"]["success"] == total - total // 10
    assert kept_before == kept_after == limit       # flat: the 80,000 later calls kept nothing extra
    records = executor.audit_records()
    assert len(records) == limit
    assert records[-1]["arguments"] == str(total - 1) and records[0]["arguments"] == str(total - limit)


def test_history_limit_must_be_usable() -> None:
    executor = ToolExecutor(history_limit=3)
    with use_clock(SimulatedClock(seed=0)):
        for i in range(5):
            asyncio.run(executor.execute(lambda i=i: i, "n"))
    assert [r.data for r in executor.call_history] == [2, 3, 4]


def test_reset_forgets_history_and_statistics() -> None:
    executor = _sales_run()
    executor.reset()
    assert executor.audit_records() == [] and executor.get_summary()["total_calls"] == 0


def test_a_call_end_hook_sees_every_call_for_streaming_audit() -> None:
    """A call_end hook can write each record as it happens (for runs longer than history_limit)."""
    buffer = io.StringIO()
    executor = ToolExecutor(history_limit=2)

    def log(event) -> None:
        if event.kind == "call_end":
            buffer.write(json.dumps({"tool": event.result.name, "status": event.result.status}) + "\n")
    executor.hooks.append(log)
    with use_clock(SimulatedClock(seed=0)):
        for i in range(5):
            asyncio.run(executor.execute(lambda: 1, f"t{i}"))
    assert [json.loads(line)["tool"] for line in buffer.getvalue().splitlines()] == [f"t{i}" for i in range(5)]
