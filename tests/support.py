"""Helpers shared by several test files.

`scripted_client(replies)` starts an OfflineServer (real HTTP on 127.0.0.1) whose
model_fn plays the replies in order, and returns a real openai.OpenAI client
pointed at it; every server started here is stopped when the process exits.
`Flaky` is a sync tool that fails as told, then succeeds.
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




class Flaky:
    """A sync tool that raises the given exceptions in turn, then returns `value`."""

    def __init__(self, *errors: BaseException, value: object = "ok") -> None:
        self.errors = list(errors)
        self.value = value
        self.calls = 0
        self.args: tuple = ((), {})

    def __call__(self, *args, **kwargs):
        self.calls += 1
        self.args = (args, kwargs)
        if self.errors:
            raise self.errors.pop(0)
        return self.value
