"""The offline stand-in model: a deterministic chat model as a pure function of the request.

`respond(request)` takes a Chat Completions request body and returns the
response body. It is honest and says so: every text answer starts with
"【离线模型】", it calls a tool when one fits the question (one step per turn,
in the question's order), and it answers only from tool results, copying
numbers from the tool JSON. Tool output is data, never instructions.

One module per job: request (checking and reading the request), planning
(which tool fits which piece of the question), arguments (values from the
question), rendering (the answer from tool results, in each tool's own words),
honest (the honest model's turn) and misbehaviour (the teaching variants
":ignore-results", ":loop", ":unknown-tool", ":bad-arguments",
":change-arguments").
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from ...parsing import estimate_tokens
from ..config import OFFLINE_MODEL
from .misbehaviour import variant_reply
from .rendering import TAG
from .request import (BadRequest, OfflineAPIError, offline_model_names, read_messages, read_model, read_tools,
                      view_of)

__all__ = ["respond", "OfflineAPIError", "BadRequest", "TAG", "offline_model_names",
           "chat_completion", "tool_call"]

_EPOCH = 1_735_689_600  # 2025-01-01 UTC: `created` is this plus a hash, the same for the same request


# --- the response body ----------------------------------------------------------------

def _digest(request: Mapping) -> str:
    """A hash of what the model reads (streaming or not gives the same ids)."""
    what = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
    text = json.dumps(what, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def tool_call(name: str, arguments: Any, id: str | None = None) -> dict:
    """One tool call as it appears in choices[0].message.tool_calls; dict arguments become JSON text."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = id or "call_" + hashlib.sha256(f"{name}\n{arguments}".encode()).hexdigest()[:16]
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chat_completion(content: str | None = None, tool_calls: list[dict] | None = None, *,
                    model: str = OFFLINE_MODEL, id: str = "chatcmpl-offline-scripted",
                    created: int = _EPOCH, usage: dict | None = None) -> dict:
    """A complete Chat Completions response body: for scripted model_fn replies and for respond().

    With tool_calls, finish_reason is "tool_calls"; otherwise "stop".
    Raises ValueError when neither content nor tool_calls is given.
    """
    if content is None and not tool_calls:
        raise ValueError("chat_completion 需要 content 或 tool_calls（或两者）：请至少给一个")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    return {"id": id, "object": "chat.completion", "created": created, "model": model,
            "system_fingerprint": "offline-stand-in",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def respond(request: dict) -> dict:
    """The offline model: a Chat Completions request body in, a response body out.

    Deterministic: the same request gives the same response (id and created
    are derived from a hash of the request; "model" echoes the requested name).
    Raises BadRequest (HTTP 400, also a ValueError) for a body without
    messages or with malformed tools, and OfflineAPIError(404) for a model
    name that is not an offline model.
    """
    if not isinstance(request, dict):
        raise BadRequest("请求体必须是 JSON 对象")
    model, variant = read_model(request)
    messages, tools = read_messages(request), read_tools(request)
    reply = variant_reply(variant, view_of(messages), tools, request.get("tool_choice"))
    digest = _digest(request)
    calls = [tool_call(reply.tool, reply.arguments, id=f"call_{digest[24:40]}")] if reply.tool else None
    prompt = estimate_tokens(json.dumps([messages, request.get("tools")], ensure_ascii=False, default=str))
    completion = estimate_tokens(reply.text or reply.arguments or "")
    return chat_completion(reply.text, calls, model=model, id=f"chatcmpl-offline-{digest[:24]}",
                           created=_EPOCH + int(digest[:5], 16),
                           usage={"prompt_tokens": prompt, "completion_tokens": completion,
                                  "total_tokens": prompt + completion})
