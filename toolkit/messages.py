"""Handing a result back to the model: format_tool_message in every wire format, and task context.

The content the model reads is one JSON object:
{"status", "result", "error", "error_type", "execution_time_ms"} (+ "missing"
for a partial result, + "warnings" when the output contains text that looks
like instructions, see toolkit.safety), Chinese kept readable. With a TaskContext, a
[TASK_CONTEXT] block comes first so the model remembers the whole task.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from . import wording
from .parsing import dumps, fit_for_model, shrink_json
from .results import PARTIAL, PartialResult, ToolResult, classify_error, error_from_envelope, safe_str
from .safety import redact_value, tool_output_warnings
from .wire import WireFormat, get_format

__all__ = ["format_tool_message", "tool_content", "TaskContext", "with_task_context",
           "split_task_context", "WireFormat"]

MESSAGE_MAX_CHARS = 100_000  # a safety net; the executor budgets results long before this
RESULT_MARKER = "当前 Tool 调用结果："


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
    envelope = error_from_envelope(result)  # a tool's own {"status": "error", "error": {...}}
    if envelope is not None:
        return ToolResult(tool_name, result, envelope.message, error_type=envelope.error_type,
                          error_code=envelope.code)
    return ToolResult(tool_name, result)


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
    never raises for any result. Raises ValueError for an unknown fmt or an
    empty tool_call_id (the model could not match the result to its call).
    """
    if not tool_call_id or not isinstance(tool_call_id, str):
        raise ValueError(f"tool_call_id must be the non-empty id from the model's tool call, got {tool_call_id!r}")
    wire = get_format(fmt)
    res = _as_result(safe_str(tool_name, 200), result)
    content = tool_content(res)
    if task_context is not None:
        content = with_task_context(content, task_context)
    return wire.result_message(tool_call_id, content, res.status == "error")


@dataclass
class TaskContext:
    """Where a multi-step task stands: the task, its steps, and how many are done."""

    task: str
    steps: list[str] = field(default_factory=list)
    done: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.done, int) or not 0 <= self.done <= len(self.steps):
            raise ValueError(f"done must be an int between 0 and len(steps)={len(self.steps)}, got {self.done!r}")

    def render(self) -> str:
        total = len(self.steps)
        finished = "；".join(self.steps[: self.done]) or "无"
        upcoming = self.steps[self.done] if self.done < total else "所有步骤已完成，请根据结果回答用户"
        return ("[TASK_CONTEXT]\n"
                f"当前任务：{self.task}\n"
                f"已完成步骤：{min(self.done, total)}/{total}\n"
                f"已完成：{finished}\n"
                f"下一步：{upcoming}\n"
                "[/TASK_CONTEXT]")

    def advance(self) -> "TaskContext":
        """Mark one more step done (never past the last); returns self."""
        self.done = min(self.done + 1, len(self.steps))
        return self


def with_task_context(content: str, context: TaskContext) -> str:
    """Put the [TASK_CONTEXT] block before a tool result's content."""
    return f"{context.render()}\n{RESULT_MARKER}\n{content}"


def split_task_context(content: str) -> tuple[str | None, str]:
    """Undo with_task_context: (the context block or None, the result content)."""
    if content.startswith("[TASK_CONTEXT]") and RESULT_MARKER in content:
        block, _, rest = content.partition(f"\n{RESULT_MARKER}\n")
        return block, rest
    return None, content
