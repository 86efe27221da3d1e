"""Helpers shared by several test files.

`scripted_client(replies)` starts an OfflineServer (real HTTP on 127.0.0.1) whose
model_fn plays the replies in order, and returns a real openai.OpenAI client
pointed at it; every server started here is stopped when the process exits.
`sdk_client(base_url)` is that real client for any test server: the SDK clients of a test
process share one HTTP client, because each new one loads the CA bundle again (20-25 ms:
the 1,300 examples of one fuzz target spent 30 s on it, for plain HTTP on 127.0.0.1).
`RawReplyServer(body, content_type)` is a stdlib HTTP server on 127.0.0.1 that answers
every POST with HTTP 200 and exactly those bytes (malformed model replies).
`Flaky` is a sync tool that fails as told, then succeeds.
`talks_to_model(path)`: whether a notebook's code talks to whatever model the environment configures.
`my_toolkit_before(notebook, folder)` / `assert_saved_its_piece(notebook, folder)`: the student's own toolkit
as it stands when a lesson opens, and the piece the chapter saved held to tests/chapters_my_toolkit.
"""
from __future__ import annotations

import atexit
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import openai

from toolkit.llm import OfflineServer, chat_completion, tool_call

_servers: list[OfflineServer] = []
# no keep-alive: a connection to a stopped test server is never reused for a new one on the same port
_HTTP = openai.DefaultHttpxClient(limits=httpx.Limits(max_connections=100, max_keepalive_connections=0))


def sdk_client(base_url: str, api_key: str = "sk-test-0000000000", **options) -> openai.OpenAI:
    """A real openai.OpenAI client for a test server, with the SDK's retries off unless `options` say otherwise
    (timeout=..., max_retries=...); it shares this process's HTTP client, so do not close() it."""
    return openai.OpenAI(api_key=api_key, base_url=base_url, http_client=_HTTP, **{"max_retries": 0, **options})


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
    return sdk_client(server.base_url, api_key), server.requests


@atexit.register
def _stop_all() -> None:
    for server in _servers:
        server.stop()


class RawReplyServer:
    """HTTP 200 with a fixed body for every POST: the endpoint that answers, but not with a chat completion.

    Use as a context manager; `base_url` ends in /v1 like a real endpoint; `body`
    may be changed between requests; `posts` counts the requests.
    """

    def __init__(self, body: bytes | str, content_type: str = "application/json") -> None:
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.content_type = content_type
        self.posts = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                outer.posts += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", outer.content_type)
                self.send_header("content-length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})  # shutdown() waits up to one poll

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def client(self) -> openai.OpenAI:
        return sdk_client(self.base_url, "sk-raw-0000000000", timeout=10)

    def __enter__(self) -> "RawReplyServer":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()




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


# code that talks to whatever model the environment configures (AgentPanel asks it too, in its honest mode, and the
# capstone's runs): only such notebooks can behave differently with another model
TALKS_TO_MODEL = re.compile(r"\brun_agent\(|\bmake_client\(|\bAgentPanel\(|\btoolkit\.(agent|llm|mcp|capstone)\b")


def talks_to_model(path: Path) -> bool:
    import nbformat

    cells = nbformat.read(path, as_version=4).cells
    return bool(TALKS_TO_MODEL.search("\n".join(c.source for c in cells if c.cell_type == "code")))


# Chapters 01-07 each end by saving one piece of the student's own toolkit (toolkit.mine.save) into my_toolkit/;
# tests/chapters_my_toolkit holds what they save. The passes that execute every lesson filled in (the other-model
# pass, test_your_turn) start each one from the pieces of the lessons before it, as a student who did them has
# them, and hold the piece it saves to the stored one: chapter by chapter, that is the stored folder built from
# an empty one in order (tests/test_capstone_chapters.py checks both passes cover chapters 01-07).
CHAPTERS_MY_TOOLKIT = Path(__file__).resolve().parent / "chapters_my_toolkit"
PIECES = {"01": "parse.py", "02": "truncate.py", "03": "retry.py", "04": "format_message.py", "05": "evaluate.py",
          "06": "executor.py", "07": "loop.py"}  # chapter -> the piece its save(...) writes


def my_toolkit_before(notebook: Path, folder: Path) -> Path:
    """`folder` made the my_toolkit a student has on opening `notebook`: the stored pieces of the chapters before
    it (an appendix NNb_ comes after chapter NN; from chapter 08 on, all seven)."""
    number, appendix = notebook.name[:2], notebook.name[2] == "b"
    before = {name for chapter, name in PIECES.items() if chapter < number or (appendix and chapter == number)}
    shutil.copytree(CHAPTERS_MY_TOOLKIT, folder, ignore=lambda _, names: [
        n for n in names if n in ("README.md", "__pycache__") or (n in PIECES.values() and n not in before)])
    return folder


def assert_saved_its_piece(notebook: Path, folder: Path) -> None:
    """A chapter that saves a piece wrote exactly the stored one into `folder` (after running it there)."""
    name = PIECES.get(notebook.name[:2]) if notebook.name[2] == "_" else None
    if name is None:
        return
    saved = folder / name
    assert saved.is_file(), f"{notebook.name} did not save {name} into my_toolkit"
    assert saved.read_text(encoding="utf-8") == (CHAPTERS_MY_TOOLKIT / name).read_text(encoding="utf-8"), (
        f"{name} as {notebook.name} saves it differs from tests/chapters_my_toolkit: "
        "run `python tests/test_capstone_chapters.py` to write the stored folder again")
