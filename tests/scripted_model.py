"""A scripted model behind the real openai SDK over real HTTP on 127.0.0.1.

`scripted_client(replies)` starts an OfflineServer whose model_fn plays the
replies in order, and returns a real openai.OpenAI client pointed at it.
Shared by the reliability tests (fault matrix, runaway, secrets, cancellation,
injection); every server started here is stopped when the test process exits.
"""
from __future__ import annotations

import atexit

import openai

from toolkit.llm import OfflineServer, chat_completion, tool_call

_servers: list[OfflineServer] = []


def scripted_client(replies: list[dict], api_key: str = "sk-scripted-0000000000") -> tuple[openai.OpenAI, list]:
    """(client, requests): reply i answers request i (the last one repeats).

    A reply is {"tool_calls": [(name, arguments_json)]} or {"content": "..."}; tool
    call ids are "call_<request number>_<n>". `requests` collects every request body.
    """
    count = 0

    def model_fn(request: dict) -> dict:
        nonlocal count
        count += 1
        reply = replies[min(count, len(replies)) - 1]
        calls = [tool_call(name, arguments, id=f"call_{count}_{i}")
                 for i, (name, arguments) in enumerate(reply.get("tool_calls") or [], 1)]
        return chat_completion(reply.get("content"), calls or None, model="scripted", id=f"chatcmpl-{count}")

    server = OfflineServer(model_fn).start()
    _servers.append(server)
    client = openai.OpenAI(api_key=api_key, base_url=server.base_url, max_retries=0)
    return client, server.requests


@atexit.register
def _stop_all() -> None:
    for server in _servers:
        server.stop()


