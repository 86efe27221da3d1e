"""The fault matrix: every fault, through every layer of the road, as one assertion each.

Rows are faults (timeout, hang, connection reset, 429 with Retry-After, 500, 503,
401, 403, PermissionError, bad arguments, unknown tool, arguments not JSON,
partial result, 10 MB of output, output json cannot serialize, an exception
whose str() raises, the tool's own error envelope). Columns are the layers:
call_tool_with_retry, ToolExecutor.run_tool_call through a registry, and
run_agent with a scripted model behind the real openai SDK over HTTP on 127.0.0.1.
Each cell checks attempts, final status, error type and code; no fault ever
escapes as an exception. Time is simulated. `pytest -s -n 0` prints the table and
writes it as Markdown to the temp directory.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from support import scripted_client

from toolkit import (Backoff, HTTPStatusError, RetryPolicy, SimulatedClock, Tool, ToolExecutor, ToolRegistry,
                     call_tool_with_retry, inject_faults, use_clock)
from toolkit.messages import tool_content
from toolkit.shrink import dumps
from toolkit.results import PartialResult

POLICY = RetryPolicy(max_retries=3, attempt_timeout=5.0, backoff=Backoff(base=1.0, cap=8.0, jitter="full"))
RESULT_MAX_CHARS = 4000
SCHEMA = {"type": "object", "properties": {"quantity": {"type": "integer"}}, "additionalProperties": False}
TEN_MB = 10 * 1024 * 1024


def sales_probe(quantity: int = 1) -> dict:
    """The healthy tool every fault wraps: the 显示器 line of the sales data (899 per unit)."""
    if not isinstance(quantity, int) or isinstance(quantity, bool):
        raise ValueError(f"quantity 必须是整数，收到 {quantity!r}")
    return {"category": "显示器", "sales": 899 * quantity}


class UnprintableError(Exception):
    """An exception whose str() itself raises."""

    def __str__(self) -> str:
        raise RuntimeError("str() of this exception fails")


def _raising(exc: BaseException) -> Callable[..., Any]:
    async def tool(quantity: int = 1) -> Any:
        raise exc
    return tool


def _returning(value: Any) -> Callable[..., Any]:
    async def tool(quantity: int = 1) -> Any:
        return value
    return tool


def _faulty(fault: str) -> Callable[[], Callable[..., Any]]:
    return lambda: inject_faults(sales_probe, [fault] * 10, retry_after=2.0)


def _unserializable() -> dict:
    return {"when": dt.datetime(2024, 5, 1, 9, 30), "amount": decimal.Decimal("9692.00"),
            "tags": {"键盘"}, "raw": b"\xff\xfe\x00", "ratio": float("nan"), "obj": object()}


ENVELOPE = {"status": "error", "data": None, "source": ["data/input/sales.csv"],
            "error": {"code": "FILE_NOT_FOUND", "message": "找不到教学数据文件 data/input/sales.csv"}}


@dataclass(frozen=True)
class Fault:
    """One row: how to make the fault, and what every layer must report for it."""

    key: str
    label: str
    make: Callable[[], Callable[..., Any]]
    attempts: int                 # attempts the tool gets (through any layer that runs it)
    status: str                   # "success" | "partial" | "error"
    error_type: str | None
    code: str | None
    arguments: str = '{"quantity": 1}'
    tool_name: str = "sales_probe"
    registry_refuses: bool = False  # refused by the registry before any attempt
    needs_registry: bool = False    # only meaningful where there is a registry


FAULT_ROWS = [
    Fault("timeout", "timeout (TimeoutError)", _faulty("timeout"), 4, "error", "retryable", "TIMEOUT"),
    Fault("hang", "hang past the 5 s attempt timeout", _faulty("hang"), 4, "error", "retryable", "TIMEOUT"),
    Fault("connection", "connection reset", _faulty("connection"), 4, "error", "retryable", "CONNECTION"),
    Fault("rate_limit", "HTTP 429, Retry-After: 2", _faulty("rate_limit"), 4, "error", "retryable", "RATE_LIMITED"),
    Fault("server_error", "HTTP 500", _faulty("server_error"), 4, "error", "retryable", "SERVER_ERROR"),
    Fault("unavailable", "HTTP 503", _faulty("unavailable"), 4, "error", "retryable", "UNAVAILABLE"),
    Fault("auth", "HTTP 401", _faulty("auth"), 1, "error", "fatal", "UNAUTHORIZED"),
    Fault("forbidden", "HTTP 403", lambda: _raising(HTTPStatusError(403, "禁止访问 sales.csv")), 1, "error",
          "fatal", "FORBIDDEN"),
    Fault("permission", "PermissionError", _faulty("permission"), 1, "error", "fatal", "PERMISSION_DENIED"),
    Fault("bad_args", 'bad arguments {"quantity": "abc"}', lambda: sales_probe, 1, "error", "fatal",
          "INVALID_ARGUMENTS", arguments='{"quantity": "abc"}', registry_refuses=True),
    Fault("unknown_tool", "unknown tool name", lambda: sales_probe, 0, "error", "fatal", "UNKNOWN_TOOL",
          tool_name="delete_all_sales", registry_refuses=True, needs_registry=True),
    Fault("not_json", "arguments not JSON", lambda: sales_probe, 0, "error", "fatal", "INVALID_ARGUMENTS_JSON",
          arguments='{quantity: 1', registry_refuses=True, needs_registry=True),
    Fault("partial", "partial result", _faulty("partial"), 1, "partial", "partial", None),
    Fault("ten_mb", "tool returns 10 MB", lambda: _returning("键盘,12,199\n" * (TEN_MB // 12)), 1, "success",
          None, None),
    Fault("unserializable", "returns what json cannot serialize", lambda: _returning(_unserializable()), 1,
          "success", None, None),
    Fault("unprintable", "raises an exception whose str() raises", lambda: _raising(UnprintableError()), 1,
          "error", "fatal", "UNKNOWN"),
    Fault("envelope", "tool's own error envelope (sales tool)", lambda: _returning(ENVELOPE), 1, "error",
          "fatal", "FILE_NOT_FOUND"),
]
BY_KEY = {f.key: f for f in FAULT_ROWS}


@dataclass
class Cell:
    """What one layer reported for one fault."""

    attempts: int
    status: str
    error_type: str | None
    code: str | None
    message: str          # what the model reads: the error, or the start of the result JSON
    elapsed: float        # simulated seconds
    waits: list[float]
    content: str = ""     # the tool message content (executor and agent layers)

    def short(self) -> str:
        kind = f"{self.error_type}/{self.code}" if self.code else (self.error_type or "-")
        return f"{self.attempts} · {self.status} · {kind}"


# --- the three layers ------------------------------------------------------------------------

def via_retry(fault: Fault) -> Cell:
    """call_tool_with_retry(tool, **arguments) under a simulated clock."""
    with use_clock(SimulatedClock(seed=0)) as clock:
        tool = fault.make()
        outcome = asyncio.run(call_tool_with_retry(tool, policy=POLICY, **json.loads(fault.arguments)))
        value, error = outcome
        if error is None:
            status = "partial" if isinstance(value, PartialResult) else "success"
            message = dumps(value.data if isinstance(value, PartialResult) else None) if status == "partial" \
                else _first_json(value)
        else:
            status, message = "error", error
        info = outcome.info
        error_type = info.error_type if info else ("partial" if status == "partial" else None)
        return Cell(outcome.attempts, status, error_type, info.error_code if info else None, message,
                    clock.now(), outcome.waits)


def _first_json(value: Any) -> str:
    from toolkit.fitting import fit_for_model
    return dumps(fit_for_model(value, 200)[0])


def _registry(fault: Fault) -> ToolRegistry:
    return ToolRegistry([Tool("sales_probe", fault.make(), "查询显示器的销售额", SCHEMA)])


def _executor(registry: ToolRegistry) -> ToolExecutor:
    return ToolExecutor(policy=POLICY, registry=registry, result_max_chars=RESULT_MAX_CHARS)


def _cell_from_content(attempts: int, content: str, elapsed: float, waits: list[float]) -> Cell:
    payload = json.loads(content)
    message = payload["error"] or dumps(payload["result"])
    return Cell(attempts, payload["status"], payload["error_type"], payload.get("error_code"), message,
                elapsed, waits, content)


def via_executor(fault: Fault) -> Cell:
    """ToolExecutor.run_tool_call with a model-style tool call, through a registry."""
    with use_clock(SimulatedClock(seed=0)) as clock:
        executor = _executor(_registry(fault))
        call = {"id": "call_1", "type": "function",
                "function": {"name": fault.tool_name, "arguments": fault.arguments}}
        result = asyncio.run(executor.run_tool_call(call))
        return _cell_from_content(result.attempts, tool_content(result), clock.now(),
                                  [a.wait_after for a in result.trace if a.wait_after])


def via_agent(fault: Fault) -> Cell:
    """run_agent: the scripted model calls the tool once, then answers from the tool message."""
    from toolkit.agent import run_agent

    with use_clock(SimulatedClock(seed=0)) as clock:
        registry = _registry(fault)
        client, requests = scripted_client([{"tool_calls": [(fault.tool_name, fault.arguments)]},
                                            {"content": "根据工具结果回答。"}])
        run = run_agent("显示器卖了多少钱？", client=client, model="scripted", registry=registry,
                        executor=_executor(registry), max_turns=3)
        assert run.stopped == "answered", run.summary()
        tool_messages = [m for m in requests[-1]["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == ["call_1_1"]
        result = run.tool_results[0]
        return _cell_from_content(result.attempts, tool_messages[0]["content"], clock.now(),
                                  [a.wait_after for a in result.trace if a.wait_after])


LAYERS: dict[str, Callable[[Fault], Cell]] = {"retry": via_retry, "executor": via_executor, "agent": via_agent}


def _applies(layer: str, fault: Fault) -> bool:
    return not (layer == "retry" and fault.needs_registry)


CASES = [pytest.param(layer, f.key, id=f"{layer}-{f.key}") for f in FAULT_ROWS for layer in LAYERS
         if _applies(layer, f)]


# --- the assertions ----------------------------------------------------------------------------

def check_cell(layer: str, fault: Fault, cell: Cell) -> None:
    """Everything a cell must satisfy; raises AssertionError naming what differs."""
    refused = fault.registry_refuses and layer != "retry"
    assert cell.attempts == (0 if refused else fault.attempts)
    assert cell.status == fault.status
    assert cell.error_type == fault.error_type
    assert cell.code == fault.code
    assert cell.message, "the model must always be told something"
    assert "Traceback" not in cell.message
    # never longer than the worst case the policy promises (a hang is stopped by the attempt timeout)
    assert cell.elapsed <= POLICY.worst_case() + 1e-9
    if cell.status == "error":
        assert cell.message.strip()
    if fault.key == "hang":
        assert cell.elapsed >= fault.attempts * POLICY.attempt_timeout
    if fault.key == "rate_limit":
        assert len(cell.waits) == 3 and min(cell.waits) >= 2.0, "Retry-After: 2 must be honoured"
    if fault.error_type == "fatal" or fault.status != "error":
        assert cell.waits == [], "nothing to wait for when there is nothing to retry"
    if cell.content:
        payload = json.loads(cell.content)  # the tool message is always valid JSON
        if fault.key == "ten_mb":
            assert len(cell.content) < RESULT_MAX_CHARS + 500
            assert len(dumps(payload["result"])) <= RESULT_MAX_CHARS
            assert "已省略" in payload["result"]
        if fault.key == "unserializable":
            assert payload["result"]["amount"] == "9692.00" and payload["result"]["when"] == "2024-05-01T09:30:00"
            assert payload["result"]["ratio"] == "nan"
        if fault.key == "partial":
            assert payload["missing"] and payload["result"] == {"category": "显示器", "sales": 899}
        if fault.key == "envelope":
            # opened once by the executor: one status, the code beside it, no envelope inside "result"
            assert payload["error_code"] == "FILE_NOT_FOUND" and "status" not in json.dumps(payload["result"])
    if fault.key == "unprintable":
        assert "UnprintableError" in cell.message


@pytest.mark.parametrize("layer,key", CASES)
def test_fault_is_reported_not_raised(layer: str, key: str) -> None:
    fault = BY_KEY[key]
    cell = LAYERS[layer](fault)  # any exception here is a fault that escaped
    check_cell(layer, fault, cell)


def test_retryable_faults_are_retried_fatal_ones_are_not() -> None:
    retried = {f.key for f in FAULT_ROWS if not f.needs_registry and via_retry(f).attempts > 1}
    assert retried == {"timeout", "hang", "connection", "rate_limit", "server_error", "unavailable"}


# --- the table -------------------------------------------------------------------------------

def _clip(text: str, n: int = 40) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= n else text[: n - 1] + "…"


def build_matrix() -> list[dict[str, Any]]:
    """Run every fault through every layer; one dict per row with a Cell (or None) per layer."""
    layers = dict(LAYERS)
    rows = []
    for fault in FAULT_ROWS:
        row: dict[str, Any] = {"fault": fault}
        for name, run in layers.items():
            row[name] = run(fault) if _applies(name, fault) else None
        rows.append(row)
    return rows


def render_markdown(rows: list[dict[str, Any]]) -> str:
    layers = [k for k in LAYERS if k in rows[0]]
    titles = {"retry": "call_tool_with_retry", "executor": "ToolExecutor.run_tool_call",
              "agent": "run_agent (scripted model)"}
    head = ("| fault | " + " | ".join(titles[k] for k in layers) +
            " | sim. s | message to the model (first 40 chars) |")
    lines = [f"Policy: {POLICY.max_retries} retries, {POLICY.attempt_timeout:g} s per attempt, "
             f"{POLICY.backoff}. Cell = attempts · final status · error type/code.", "",
             head, "|" + "---|" * (len(layers) + 3)]
    for row in rows:
        cells = [row[k].short() if row[k] is not None else "n/a (no registry)" for k in layers]
        last = row[layers[-1]]
        lines.append(f"| {row['fault'].label} | " + " | ".join(cells) +
                     f" | {last.elapsed:.2f} | {_clip(last.message)} |")
    return "\n".join(lines)


def test_fault_matrix_table_prints_and_every_cell_holds(tmp_path: Path) -> None:
    rows = build_matrix()
    for row in rows:
        for layer, cell in row.items():
            if layer != "fault" and cell is not None:
                check_cell(layer, row["fault"], cell)
    table = render_markdown(rows)
    path = tmp_path / "fault_matrix.md"  # per run: a fixed name in /tmp belongs to whichever user wrote it first
    path.write_text("# Fault matrix\n\n" + table + "\n", encoding="utf-8")
    print("\n" + table + f"\n(written to {path})")
    assert table.count("\n| ") == len(FAULT_ROWS) + 1
    assert not any(math.isnan(row[k].elapsed) for row in rows for k in row if k != "fault" and row[k])
