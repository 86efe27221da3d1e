"""Handing a result back to the model: format_tool_message in every wire format, and task context.

The content the model reads is one JSON object:
{"status", "result", "error", "error_type", "execution_time_ms"} (+ "missing"
for a partial result, + "warnings" when the output contains text that looks
like instructions, see toolkit.safety, + "decision" when the road decided what
to do next, see toolkit.decisions), Chinese kept readable. With a TaskContext, a
[TASK_CONTEXT] block comes first so the model remembers the whole task.

A ToolResult from the executor is sent as it is: the executor budgeted and
redacted its data once (toolkit.fitting.fit_and_redact; `truncated` is then
True or False). A raw value (a tool's return value, an exception, a
PartialResult) and a ToolResult built by hand (`truncated` None) are budgeted
and redacted here, by the same function, once.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from . import wording
from .fitting import fit_and_redact
from .redaction import safe_str
from .results import PARTIAL, PartialResult, ToolResult, classify_error, unwrap_envelope
from .safety import redact_value, tool_output_warnings
from .shrink import dumps, shrink_json
from .task_context import TaskContext, with_task_context
from .wire import WireFormat, get_format, wrap_result

__all__ = ["format_tool_message", "tool_content", "decision_for_model", "MESSAGE_MAX_CHARS"]

MESSAGE_MAX_CHARS = 100_000  # a safety net; the executor budgets results long before this
RAW_MAX_CHARS = MESSAGE_MAX_CHARS // 2  # the budget for a raw value handed to format_tool_message
_DECISION_FIELDS = ("action", "suggestion")


def _as_result(tool_name: str, result: Any) -> ToolResult:
    """The ToolResult the model reads: a budgeted one as it is; anything else (a raw value, a ToolResult
    built by hand) with its data budgeted and its texts redacted, once, here."""
    if isinstance(result, ToolResult):
        if result.truncated is not None:  # the executor fitted it: nothing to do again
            return result
        data, truncated = fit_and_redact(result.data, RAW_MAX_CHARS)
        error, missing, note = (redact_value(text) for text in (result.error, result.missing, result.note))
        return replace(result, data=data, error=error, missing=missing, note=note, truncated=truncated,
                       error_code=redact_value(result.error_code))
    if isinstance(result, BaseException):
        info = classify_error(result)
        return ToolResult(tool_name, None, info.message, error_type=info.error_type, error_code=info.error_code,
                          truncated=False)
    if isinstance(result, PartialResult):  # what arrived is data; the model must also see what is missing
        missing = safe_str(result.missing)
        data, truncated = fit_and_redact(result.data, RAW_MAX_CHARS)
        return ToolResult(tool_name, data, wording.partial_missing(missing), error_type=PARTIAL,
                          missing=missing, truncated=truncated, artifact=result.data)
    raw, source, info = unwrap_envelope(result)  # a tool's own {status, data, source, error}, opened once
    data, truncated = fit_and_redact(raw, RAW_MAX_CHARS)
    if info is not None:
        return ToolResult(tool_name, data, info.message, error_type=info.error_type, error_code=info.error_code,
                          truncated=truncated, artifact=raw, source=source)
    return ToolResult(tool_name, data, truncated=truncated, artifact=raw, source=source)


def decision_for_model(decision: Any) -> dict | None:
    """The part of a decision (evaluate_tool_result's Decision, or a plug-in's dict) the model reads:
    {"action", "suggestion"}, each as bounded, redacted text; None when the decision has neither."""
    if not isinstance(decision, Mapping):
        return None
    shown = {key: text for key in _DECISION_FIELDS
             if (value := decision.get(key)) is not None and (text := safe_str(value, 300))}
    return shown or None


def tool_content(result: ToolResult, decision: Any = None) -> str:
    """The JSON text the model reads for one result (and the road's `decision` about it)."""
    result = _as_result(result.name, result)
    payload: dict[str, Any] = {
        "status": result.status,
        "result": result.data,
        "error": result.error,
        "error_type": result.error_type,
        "execution_time_ms": round(float(result.duration_ms or 0.0), 1),
    }
    if result.error_code:
        payload["error_code"] = result.error_code
    if result.missing:
        payload["missing"] = result.missing
    if result.attempts > 1:
        payload["attempts"] = result.attempts
    if result.note:
        payload["note"] = result.note
    shown = decision_for_model(decision)
    if shown is not None:
        payload["decision"] = shown
    warnings = tool_output_warnings(result.data, result.error, result.missing, shown)  # scan what the model reads
    if warnings:  # untrusted text stays data; the model sees the flag right after the status
        payload = {"status": payload.pop("status"), "warnings": warnings, **payload}
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate could not be sent to the model API
        if len(text) <= MESSAGE_MAX_CHARS:
            return text
    except (TypeError, ValueError):  # data json cannot serialize in a ToolResult built by hand; a lone surrogate
        pass
    # a ToolResult built by hand around data json cannot send: shown as faithful JSON text, the other fields kept
    payload["result"] = shrink_json(payload["result"], RAW_MAX_CHARS)
    return dumps(shrink_json(payload, MESSAGE_MAX_CHARS))


def format_tool_message(tool_name: str, tool_call_id: str, result: Any,
                        fmt: str | WireFormat = "openai_chat",
                        task_context: "TaskContext | None" = None, decision: Any = None) -> dict:
    """Wrap a tool result in the message the model API expects.

    fmt="openai_chat": {"role": "tool", "tool_call_id", "content"} (Chat Completions).
    fmt="openai_responses": {"type": "function_call_output", "call_id", "output"}.
    fmt="anthropic": {"type": "tool_result", "tool_use_id", "content", "is_error"}
    (a block for the next user message's content list).
    Any format registered with toolkit.wire.register_format works the same way.
    `result` is a ToolResult (the executor's is sent as it is; one built by
    hand is budgeted and redacted here); a plain value counts as success and an
    exception as a failure, and is budgeted and redacted here. `decision` (evaluate_tool_result's Decision)
    adds {"action", "suggestion"} as the content's "decision". Data json cannot
    serialize is shown as faithful text. A format whose result_message fails on a result
    gets an error result in its own shape instead (toolkit.wire.wrap_result).
    Raises ValueError for an unknown fmt, an empty tool_call_id (the model
    could not match the result to its call), and a format that cannot write
    even that error result: one handed over without register_format (which
    tries it on a success and on the error result), or one that fails on what
    it passed there; a replaced built-in name falls back to the toolkit's own.
    """
    if not tool_call_id or not isinstance(tool_call_id, str):
        raise ValueError(f"tool_call_id 不能为空：请传模型那次 tool_call 的 id（例如 'call_1'），模型靠它把结果对应到"
                         f"自己的调用；收到的是 {tool_call_id!r}")
    wire = get_format(fmt)
    res = _as_result(safe_str(tool_name, 200), result)
    content = tool_content(res, decision)  # res is budgeted now: tool_content takes it as it is
    if task_context is not None:
        content = with_task_context(content, task_context)
    return wrap_result(wire, tool_call_id, content, res.status == "error")

