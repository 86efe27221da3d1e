"""Checking and reading the request: the offline model's errors, the offered tools, the conversation view."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ...redaction import safe_str
from ..config import OFFLINE_MODEL, OFFLINE_VARIANTS

__all__ = ["OfflineAPIError", "BadRequest", "OfferedTool", "View", "offline_model_names", "read_tools",
           "read_messages", "read_model", "view_of", "without_first_turns", "text_of"]


class OfflineAPIError(Exception):
    """An OpenAI-style HTTP error the offline server sends back.

    A scripted model_fn may raise it to make the server answer e.g. 401, 429
    or 500: OfflineAPIError(429, "请求过于频繁", headers={"retry-after-ms": "10"}).
    """

    def __init__(self, status_code: int, message: str, *, code: str | None = None,
                 type: str | None = None, param: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        if not isinstance(status_code, int) or not 400 <= status_code <= 599:
            raise ValueError(f"status_code must be an HTTP error status 400-599, got {status_code!r}")
        self.status_code = status_code
        self.message = message
        self.code = code
        self.type = type or ("invalid_request_error" if status_code < 500 else "server_error")
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class BadRequest(OfflineAPIError, ValueError):
    """A request body the offline model cannot read (HTTP 400)."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(400, message, code="invalid_request", param=param)


def offline_model_names() -> list[str]:
    """Every model name the offline server answers to."""
    return [f"{OFFLINE_MODEL}:{v}" if v else OFFLINE_MODEL for v in OFFLINE_VARIANTS]


@dataclass(frozen=True)
class OfferedTool:
    """A tool as the request offers it: name, description, JSON schema of the parameters."""

    name: str
    description: str
    parameters: dict


@dataclass
class View:
    """The conversation since the user's last question."""

    question: str
    after: list[dict]
    calls: dict[str, dict] = field(default_factory=dict)  # tool_call id -> {"name", "arguments"}
    results: list[tuple[dict, str]] = field(default_factory=list)  # (call, tool message content)
    turns: int = 0  # assistant turns with tool calls


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def read_tools(request: dict) -> list[OfferedTool]:
    raw = request.get("tools") or []
    if not isinstance(raw, list):
        raise BadRequest("tools 必须是列表", param="tools")
    tools = []
    for i, item in enumerate(raw):
        fn = item.get("function") if isinstance(item, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise BadRequest(f"tools[{i}] 缺少 function.name", param=f"tools[{i}]")
        params = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
        tools.append(OfferedTool(fn["name"], str(fn.get("description") or ""), params))
    return tools


def read_messages(request: dict) -> list[dict]:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("缺少 messages：需要一个非空的消息列表", param="messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"messages[{i}] 必须是带 role 的对象", param=f"messages[{i}]")
    _check_pairs(messages)
    return messages


def _check_pairs(messages: list[dict]) -> None:
    """Refuse what the real API refuses: an assistant's tool calls not each answered by a tool message right after
    it (the last message included), or a tool message that answers no call before it (clearing a conversation by
    deleting messages does that)."""
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in open_ids:
                raise BadRequest(f"messages[{i}]：role 为 tool 的消息必须回应它前面 assistant 消息里的某个 tool_call，"
                                 f"找不到 tool_call_id {safe_str(call_id, 60)}", param=f"messages[{i}]")
            open_ids.remove(call_id)
            continue
        if open_ids:
            raise BadRequest(f"messages[{i}]：带 tool_calls 的 assistant 消息后面必须紧跟回应每个 tool_call_id 的 tool 消息，"
                             f"缺少 {', '.join(safe_str(c, 60) for c in open_ids)}", param=f"messages[{i}]")
        open_ids = [str(c.get("id")) for c in _calls_of(message)]
    if open_ids:  # the last assistant message's calls were never answered (a loop that forgot its tool messages)
        raise BadRequest(f"messages[{len(messages) - 1}]：带 tool_calls 的 assistant 消息后面必须紧跟回应每个 "
                         f"tool_call_id 的 tool 消息，缺少 {', '.join(safe_str(c, 60) for c in open_ids)}",
                         param=f"messages[{len(messages) - 1}]")


def read_model(request: dict) -> tuple[str, str]:
    """(the model name, its variant: "" for the honest model)."""
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("缺少 model", param="model")
    base, _, variant = model.partition(":")
    if base != OFFLINE_MODEL or variant not in OFFLINE_VARIANTS:
        known = "、".join(offline_model_names())
        raise OfflineAPIError(404, f"离线服务器没有模型 {safe_str(model, 80)}，可用：{known}",
                              code="model_not_found", param="model")
    return model, variant


def _calls_of(message: dict) -> list[dict]:
    """The tool calls of an assistant message (only well-formed dicts)."""
    calls = message.get("tool_calls") if message["role"] == "assistant" else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def view_of(messages: list[dict]) -> View:
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    question = text_of(messages[last_user].get("content")) if last_user >= 0 else ""
    view = View(question, messages[last_user + 1:])
    for message in view.after:
        if _calls_of(message):
            view.turns += 1
            for call in _calls_of(message):
                fn = call.get("function") if isinstance(call.get("function"), dict) else {}
                view.calls[str(call.get("id"))] = {"name": str(fn.get("name") or ""), "arguments": fn.get("arguments")}
        elif message["role"] == "tool":
            call = view.calls.get(str(message.get("tool_call_id")), {"name": "", "arguments": None})
            view.results.append((call, text_of(message.get("content"))))
    return view


def without_first_turns(view: View, k: int) -> View:
    """The view as if the first k tool-call turns (and their results) never happened."""
    dropped: set[str] = set()
    kept: list[dict] = []
    seen = 0
    for message in view.after:
        if _calls_of(message) and seen < k:
            seen += 1
            dropped.update(str(c.get("id")) for c in _calls_of(message))
        elif not (message["role"] == "tool" and str(message.get("tool_call_id")) in dropped):
            kept.append(message)
    return view_of([{"role": "user", "content": view.question}] + kept)
