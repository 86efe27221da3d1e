"""Reading a tool message back: the one status the model reads, as a value code can decide on.

`tool_content` (toolkit.messages) writes {"status", "result", "error",
"error_type", "error_code", ...} after an optional [TASK_CONTEXT] block.
`read_tool_content(text)` reads that back into a ToolReading; the offline model
and the answer check decide on its `status` field, never on the wording of a
sentence. Text that is not such a message is read as plain data (a success),
and a tool's own {status, data, source, error} envelope is opened with
`toolkit.results.unwrap_envelope`, the same function the executor uses.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from .results import unwrap_envelope
from .task_context import TaskContext, split_task_context

__all__ = ["ToolReading", "read_tool_content", "read_tool_value", "STATUSES"]

STATUSES = ("success", "partial", "error")


@dataclass(frozen=True)
class ToolReading:
    """One tool result as read back: status ("success" | "partial" | "error"), the data, and the error parts."""

    status: str
    data: Any
    error: str | None = None
    error_code: str | None = None
    error_type: str | None = None
    missing: str | None = None
    warnings: bool = False
    context: TaskContext | None = None

    @property
    def failed(self) -> bool:
        return self.status == "error"


def _text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def read_tool_value(value: Any) -> ToolReading:
    """A decoded value: the toolkit's tool-message payload, a tool envelope, or plain data."""
    if isinstance(value, dict) and value.get("status") in STATUSES and "result" in value:
        reading = ToolReading(value["status"], value.get("result"), _text(value.get("error")),
                              _text(value.get("error_code")), _text(value.get("error_type")),
                              _text(value.get("missing")), bool(value.get("warnings")))
        inner = read_tool_value(reading.data) if reading.status == "success" else reading
        return inner if inner.failed else replace(reading, data=inner.data)  # a hand-made ToolResult(name, envelope)
    data, _, info = unwrap_envelope(value)
    if info is not None:
        return ToolReading("error", data, info.message, info.error_code, info.error_type)
    return ToolReading("success", data)


def read_tool_content(text: Any) -> ToolReading:
    """A tool message's content (with or without a [TASK_CONTEXT] block) read back. Never raises."""
    if not isinstance(text, str):
        return read_tool_value(text)
    block, body = split_task_context(text)
    context = TaskContext.parse(block) if block is not None else None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return ToolReading("success", body.strip(), context=context)
    reading = read_tool_value(value)
    return reading if context is None else replace(reading, context=context)
