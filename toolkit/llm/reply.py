"""Reading the model's reply: a chat completion checked field by field before the loop trusts it.

The endpoint's reply is untrusted input like a tool's output. `read_reply`
turns whatever `client.chat.completions.create` returned (an SDK object, a
dict, or something else) into a ModelReply of plain values, or raises
BadModelReply saying what was wrong: no choices, message null, content that
is not text, tool_calls that are not a list of calls, a body that is not JSON.
Tool-call arguments always come back as text (JSON for a dict), so nothing
downstream walks a structure the model chose the depth of.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..redaction import safe_str
from .errors import BadModelReply

__all__ = ["ModelReply", "read_reply"]


@dataclass(frozen=True)
class ModelReply:
    """One assistant turn: its text (or None), its tool calls as plain dicts, and why it stopped."""

    content: str | None
    # each {"id", "type": "function", "function": {"name", "arguments"}}
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None

    def message(self) -> dict:
        """The assistant message to append to the conversation."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [dict(c, function=dict(c["function"])) for c in self.tool_calls]
        return out


def _plain(response: Any) -> Any:
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        try:
            return dump(warnings=False)
        except TypeError:
            return dump()
    raise BadModelReply(f"回复不是 JSON 对象，而是 {type(response).__name__}：{safe_str(response, 60)}")


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "<参数无法转为 JSON>"


def _call(call: Any, where: str, turn: int, n: int) -> dict:
    if not isinstance(call, dict):
        raise BadModelReply(f"{where} 应是对象，收到 {type(call).__name__}")
    function = call.get("function")
    if not isinstance(function, dict):
        raise BadModelReply(f"{where}.function 应是对象，收到 {type(function).__name__}")
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        raise BadModelReply(f"{where}.function.name 应是字符串，收到 {type(name).__name__}")
    call_id = call.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else f"call_{turn}_{n}"
    return {"id": safe_str(call_id, 200), "type": "function",
            "function": {"name": name or "", "arguments": _arguments(function.get("arguments"))}}


def read_reply(response: Any, turn: int = 1) -> ModelReply:
    """The reply's first choice as a ModelReply; BadModelReply for any other shape.

    A tool call without an id gets "call_<turn>_<n>". Never raises anything
    but BadModelReply.
    """
    try:
        body = _plain(response)
    except BadModelReply:
        raise
    except Exception as exc:  # a half-built SDK object whose dump fails
        raise BadModelReply(f"回复无法读取（{type(exc).__name__}）") from None
    if not isinstance(body, dict):
        raise BadModelReply(f"回复不是 JSON 对象，而是 {type(body).__name__}")
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise BadModelReply(f"choices 应是列表，收到 {type(choices).__name__}")
    if not choices:
        raise BadModelReply("choices 为空")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise BadModelReply(f"choices[0] 应是对象，收到 {type(choice).__name__}")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadModelReply(f"message 应是对象，收到 {'null' if message is None else type(message).__name__}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise BadModelReply(f"content 应是文本，收到 {type(content).__name__}")
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise BadModelReply(f"tool_calls 应是列表，收到 {type(raw_calls).__name__}")
    calls = [_call(c, f"tool_calls[{n - 1}]", turn, n) for n, c in enumerate(raw_calls or [], 1)]
    reason = choice.get("finish_reason")
    return ModelReply(content, calls, reason if isinstance(reason, str) else None)
