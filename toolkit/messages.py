"""Handing a result back to the model: format_tool_message in every wire format, and task context.

The content the model reads is one JSON object:
{"status", "result", "error", "error_type", "execution_time_ms"} (+ "missing"
for a partial result, + "warnings" when the output contains text that looks
like instructions, see toolkit.safety), Chinese kept readable. With a TaskContext, a
[TASK_CONTEXT] block comes first so the model remembers the whole task.
"""
from __future__ import annotations

import json
from typing import Any

from . import wording
from .parsing import dumps, fit_for_model, shrink_json
from .results import PARTIAL, PartialResult, ToolResult, classify_error, safe_str, unwrap_envelope
from .safety import redact_value, tool_output_warnings
from .task_context import RESULT_MARKER, TaskContext, split_task_context, with_task_context  # noqa: F401  (re-exported)
from .wire import WireFormat, get_format, wrap_result

__all__ = ["format_tool_message", "tool_content", "TaskContext", "with_task_context",
           "split_task_context", "WireFormat"]

MESSAGE_MAX_CHARS = 100_000  # a safety net; the executor budgets results long before this


def _as_result(tool_name: str, result: Any) -> ToolResult:
    if isinstance(result, ToolResult):
        return result
    if isinstance(result, BaseException):
        info = classify_error(result)
        return ToolResult(tool_name, None, info.message, error_type=info.error_type, error_code=info.code)
    if isinstance(result, PartialResult):  # what arrived is data; the model must also see what is missing
        missing = safe_str(result.missing)
        return ToolResult(tool_name, result.data, wording.partial_missing(missing), error_type=PARTIAL,
                          missing=missing)
    data, source, info = unwrap_envelope(result)  # a tool's own {status, data, source, error}, opened once
    if info is not None:
        return ToolResult(tool_name, data, info.message, error_type=info.error_type, error_code=info.code,
                          source=source)
    return ToolResult(tool_name, data, source=source)


def _shown(data: Any) -> Any:
    """What the model will read of `data`: within half the message budget and 20 levels deep.

    The executor has already budgeted its results (this costs little for them);
    a raw value handed to format_tool_message is shrunk here, so redaction and
    the instruction scan see all of what the model reads, however deep or long
    the raw value was."""
    if data is None or isinstance(data, (bool, int, float)):
        return data
    return fit_for_model(data, MESSAGE_MAX_CHARS // 2)[0]


def tool_content(result: ToolResult) -> str:
    """The JSON text the model reads for one result; never raises."""
    shown = _shown(result.data)
    payload: dict[str, Any] = {
        "status": result.status,
        "result": redact_value(shown),  # a key inside tool output never reaches the model
        "error": redact_value(result.error),
        "error_type": result.error_type,
        "execution_time_ms": round(float(result.duration_ms or 0.0), 1),
    }
    if result.error_code:
        payload["error_code"] = redact_value(result.error_code)
    if result.missing:
        payload["missing"] = redact_value(result.missing)
    if result.attempts > 1:
        payload["attempts"] = result.attempts
    if result.note:
        payload["note"] = result.note
    warnings = tool_output_warnings(shown, result.error, result.missing)  # scan what the model reads
    if warnings:  # untrusted text stays data; the model sees the flag right after the status
        payload = {"status": payload.pop("status"), "warnings": warnings, **payload}
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate could not be sent to the model API
        if len(text) <= MESSAGE_MAX_CHARS:
            return text
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    payload["result"] = redact_value(shrink_json(payload["result"], MESSAGE_MAX_CHARS // 2))  # keep the other fields
    return dumps(shrink_json(payload, MESSAGE_MAX_CHARS))


def format_tool_message(tool_name: str, tool_call_id: str, result: Any,
                        fmt: str | WireFormat = "openai_chat",
                        task_context: "TaskContext | None" = None) -> dict:
    """Wrap a tool result in the message the model API expects.

    fmt="openai_chat": {"role": "tool", "tool_call_id", "content"} (Chat Completions).
    fmt="openai_responses": {"type": "function_call_output", "call_id", "output"}.
    fmt="anthropic": {"type": "tool_result", "tool_use_id", "content", "is_error"}
    (a block for the next user message's content list).
    Any format registered with toolkit.wire.register_format works the same way.
    `result` is a ToolResult; a plain value counts as success and an exception
    as a failure. Data json cannot serialize is shown as faithful text, so this
    never raises for any result (a registered format whose result_message
    fails gets an error result instead: toolkit.wire.wrap_result). Raises
    ValueError for an unknown fmt or an empty tool_call_id (the model could
    not match the result to its call).
    """
    if not tool_call_id or not isinstance(tool_call_id, str):
        raise ValueError(f"tool_call_id must be the non-empty id from the model's tool call, got {tool_call_id!r}")
    wire = get_format(fmt)
    res = _as_result(safe_str(tool_name, 200), result)
    content = tool_content(res)
    if task_context is not None:
        content = with_task_context(content, task_context)
    return wrap_result(wire, tool_call_id, content, res.status == "error")
