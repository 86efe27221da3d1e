"""Secrets never leave: an API key fed in through every door comes out redacted everywhere.

The key "sk-test-" + 32 characters goes in through tool arguments, tool errors,
exception messages, HTTP error bodies (tools and the model endpoint) and the
environment; it must not appear in ToolResult.error, the call history, the audit
log (export_jsonl), the tool message, the agent's transcript, Settings' repr or
the command line's output. .env is git-ignored and .env.example has placeholders.
"""
from __future__ import annotations

import asyncio
import io
import json
import random
import string
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from toolkit import (HTTPStatusError, RetryableToolError, RetryPolicy, SimulatedClock, Tool, ToolExecutor, ToolRegistry,
                     classify_error, format_tool_message, parse_tool_result, use_clock)
from toolkit.messages import tool_content
from toolkit.redaction import redact, safe_str

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-" + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=32))
KEY_TAIL = KEY[8:]            # the secret part alone must not leak either
NEEDLES = (KEY, KEY_TAIL, KEY_TAIL[:16], KEY_TAIL[16:])


def assert_no_key(text: str, where: str = "") -> None:
    for needle in NEEDLES:
        assert needle not in text, f"key material leaked in {where}: ...{text[max(text.find(needle) - 40, 0):][:120]}"


# --- redact itself ------------------------------------------------------------------------------

@pytest.mark.parametrize("template", [
    "{k}", "Authorization: Bearer {k}", "api_key={k}", '{{"api_key": "{k}"}}', "https://x.invalid/v1?api_key={k}&q=1",
    "OPENAI_API_KEY={k}", "DASHSCOPE_API_KEY='{k}'", "token: {k}", "Incorrect API key provided: {k}.",
    "密钥是{k}，请保管好", "{k}{k}",
])
def test_redact_removes_the_key_in_common_shapes(template: str) -> None:
    text = template.format(k=KEY)
    assert_no_key(redact(text), template)
    assert_no_key(safe_str(text), template)


@pytest.mark.parametrize("template", ["Bearer {t}", "password={t}", "secret: {t}", '"token": "{t}"'])
def test_redact_removes_labelled_secrets_without_the_sk_prefix(template: str) -> None:
    token = KEY_TAIL
    assert token not in redact(template.format(t=token))


def test_safe_str_redacts_before_it_cuts() -> None:
    """A key cut in half by the length limit must not leave its first half behind."""
    text = "x" * 95 + KEY
    assert_no_key(safe_str(text, 100))


# --- tools: arguments, errors, exceptions, HTTP bodies ----------------------------------------------

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "additionalProperties": False}


def _tools() -> dict:
    def echo_error(query: str) -> dict:
        raise ValueError(f"查询失败：{query}")

    def tool_error(query: str) -> dict:
        raise RetryableToolError(f"upstream said token={KEY}")

    def connection(query: str) -> dict:
        raise ConnectionError(f"POST https://api.example.invalid/v1 headers={{'Authorization': 'Bearer {KEY}'}}")

    def http_body(query: str) -> dict:
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}})
        raise HTTPStatusError(401, body, headers={"x-echo-key": KEY})

    def http_500(query: str) -> dict:
        raise HTTPStatusError(500, f"Internal error while using key {KEY}")

    def envelope(query: str) -> dict:
        return {"status": "error", "error": {"code": "AUTH", "message": f"key {KEY} is invalid"}}

    def partial(query: str) -> object:
        from toolkit import PartialResult
        return PartialResult({"rows": 1}, f"第二页需要 api_key={KEY}")

    def fine(query: str) -> dict:
        return {"rows": 3}

    return {f.__name__: f for f in (echo_error, tool_error, connection, http_body, http_500, envelope, partial, fine)}


def _run_all() -> ToolExecutor:
    registry = ToolRegistry([Tool(name, fn, name, SCHEMA) for name, fn in _tools().items()])
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=2))
    calls = [{"id": f"call_{name}", "function": {"name": name, "arguments": json.dumps({"query": KEY})}}
             for name in registry.names]
    calls.append({"id": "call_unknown", "function": {"name": KEY, "arguments": json.dumps({"query": KEY})}})
    calls.append({"id": "call_bad_schema", "function": {"name": "fine", "arguments": json.dumps({"query": [KEY]})}})
    calls.append({"id": "call_not_json", "function": {"name": "fine", "arguments": "{query: " + KEY}})
    calls.append({"id": "call_extra", "function": {"name": "fine", "arguments": json.dumps({KEY: 1})}})
    with use_clock(SimulatedClock(seed=0)):
        asyncio.run(executor.run_tool_calls(calls))
    return executor


def test_key_never_appears_in_results_history_or_tool_messages() -> None:
    executor = _run_all()
    assert len(executor.call_history) == 12
    for result in executor.call_history:
        where = f"{result.name}/{result.call_id}"
        assert_no_key(result.error or "", f"{where}.error")
        assert_no_key(result.args_summary or "", f"{where}.args_summary")
        assert_no_key(result.missing or "", f"{where}.missing")
        assert_no_key(" ".join(a.message or "" for a in result.trace), f"{where}.trace")
        assert_no_key(tool_content(result), f"{where} tool message")
        assert_no_key(parse_tool_result(result), f"{where} parse_tool_result")
        for fmt in ("openai_chat", "openai_responses", "anthropic"):
            assert_no_key(json.dumps(format_tool_message(result.name, "call_x", result, fmt), ensure_ascii=False))
    assert sum(1 for r in executor.call_history if r.ok) == 1   # the one healthy call still worked


def test_key_never_appears_in_the_audit_log() -> None:
    executor = _run_all()
    buffer = io.StringIO()
    lines = executor.export_jsonl(buffer, task_id="secrets-test")
    text = buffer.getvalue()
    assert lines == 12 and len(text.splitlines()) == 12
    assert_no_key(text, "export_jsonl")
    assert_no_key(json.dumps(executor.get_summary(), ensure_ascii=False), "get_summary")
    for line in text.splitlines():
        record = json.loads(line)
        assert record["task_id"] == "secrets-test"


@pytest.mark.parametrize("exc", [
    Exception(KEY), TimeoutError(f"timed out calling with {KEY}"), PermissionError(f"denied for Bearer {KEY}"),
    HTTPStatusError(403, f'{{"detail": "key {KEY} has no access"}}'), KeyError(KEY),
])
def test_classify_error_message_never_carries_the_key(exc: Exception) -> None:
    assert_no_key(classify_error(exc).message)


# --- the model side: settings, the agent, the command line ---------------------------------------

def test_settings_repr_and_str_never_show_the_key() -> None:
    config = pytest.importorskip("toolkit.llm.config")
    settings = config.load_settings({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "https://example.invalid/v1",
                                     "MODEL_NAME": "some-model"}, dotenv_path=ROOT / "no-such.env")
    assert settings.api_key == KEY                     # kept for the client...
    for text in (repr(settings), str(settings), f"{settings}", repr([settings])):
        assert_no_key(text, "Settings")                # ...never shown


def test_config_errors_never_show_the_key() -> None:
    config = pytest.importorskip("toolkit.llm.config")
    for env in ({"OPENAI_API_KEY": KEY + " x", "MODEL_NAME": "m"},
                {"OPENAI_API_KEY": f"“{KEY}”", "MODEL_NAME": "m"},
                {"DASHSCOPE_API_KEY": KEY, "MODEL_NAME": "m"},
                {"OPENAI_API_KEY": KEY}):
        with pytest.raises(config.ConfigError) as caught:
            config.load_settings(env, dotenv_path=ROOT / "no-such.env")
        assert_no_key(str(caught.value), f"ConfigError for {sorted(env)}")


def test_agent_transcript_never_shows_the_key() -> None:
    pytest.importorskip("toolkit.agent")
    from support import scripted_client

    from toolkit.agent import run_agent

    registry = ToolRegistry([Tool(name, fn, name, SCHEMA) for name, fn in _tools().items()])
    replies = [{"tool_calls": [(name, json.dumps({"query": KEY})) for name in registry.names]},
               {"content": "查询失败了。"}]
    client, requests = scripted_client(replies, api_key=KEY)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("查一下", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=1)))
    assert run.ok and len(run.tool_results) == len(registry.names)
    assert_no_key(json.dumps(run.transcript, ensure_ascii=False, default=str), "AgentRun.transcript")
    assert_no_key(run.render_transcript(), "render_transcript")
    assert_no_key(run.summary(), "summary")
    assert_no_key(repr(run), "repr(AgentRun)")
    assert_no_key(json.dumps(run.messages, ensure_ascii=False, default=str), "AgentRun.messages")
    for request in requests[1:]:   # what the model was sent after the first turn
        assert_no_key(json.dumps(request["messages"], ensure_ascii=False), "messages sent to the model")


class _EchoKeyHandler(BaseHTTPRequestHandler):
    """A model endpoint that answers with the caller's key in its error body, like many real ones."""

    status = 401

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length") or 0))
        key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}. api_key={key}",
                                     "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
        self.send_response(self.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_command_line_never_prints_the_key(status: int, monkeypatch, capsys) -> None:
    pytest.importorskip("toolkit.llm")
    from toolkit.agent import main

    handler = type("Handler", (_EchoKeyHandler,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for name in ("DASHSCOPE_API_KEY", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("TOOLKIT_DOTENV", "none")   # a developer's real .env is never read
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("MODEL_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
        monkeypatch.setenv("MODEL_NAME", "some-model")
        code = main(["-v", "显示器卖了多少？"])
    finally:
        server.shutdown()
        server.server_close()
    out, err = capsys.readouterr()
    assert code == 1 and err.strip()                  # it failed, and said so
    assert "Traceback" not in err
    assert_no_key(out + err, "CLI output")


def test_command_line_verbose_run_never_prints_a_key_from_the_question(monkeypatch, capsys) -> None:
    """Offline: the key typed into the question reaches neither the answer nor the -v transcript."""
    pytest.importorskip("toolkit.llm")
    from toolkit.agent import main

    for name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")
    code = main(["-v", f"我的密钥是 {KEY}。哪个类别销售额最高？总销售额是多少？"])
    out, err = capsys.readouterr()
    assert code == 0 and "9692" in out               # it answered...
    assert "analyze_sales_csv" in err               # ...and printed its transcript
    assert_no_key(out + err, "CLI output")


# --- the files ------------------------------------------------------------------------------------

def test_dotenv_is_git_ignored() -> None:
    ignored = [line.strip() for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()]
    assert ".env" in ignored


def test_env_example_holds_placeholders_only() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert "sk-" not in text.lower().replace("sk-***", ""), "something in .env.example looks like a real key"
    values = {}
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if "=" in line and line.split("=", 1)[0].isupper():
            name, value = line.split("=", 1)
            values[name.strip()] = value.strip()
    keys = {k: v for k, v in values.items() if k.endswith("_API_KEY")}
    assert keys, ".env.example should show where the key goes"
    assert all(v == "" or v.startswith("replace-with-") for v in keys.values()), keys


@pytest.mark.parametrize("template", ["Bearer Bearer {t}", "Bearer  Bearer {t}", "Bearer " * 40 + " Bearer {t}",
                                      "Authorization: Bearer Bearer {t}", "Authorization: Basic Basic {t}",
                                      "token: token {t}"])
def test_a_scheme_word_repeated_before_the_token_does_not_shield_it(template: str) -> None:
    """Found by fuzzing: "Bearer Bearer <key>" once took the second "Bearer" for the token."""
    assert KEY_TAIL not in redact(template.format(t=KEY_TAIL))
    assert KEY_TAIL[:16] not in safe_str(template.format(t=KEY_TAIL), 2000)


def test_a_url_glued_to_chinese_text_and_a_jwt_after_a_hyphen_are_redacted() -> None:
    """Before: a scheme right after a Chinese character (no word boundary) and a JWT after "-" were missed."""
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz"
    assert KEY_TAIL not in redact(f"请访问https://user:{KEY_TAIL}@example.invalid/x")
    assert "c2lnbmF0dXJlMTIz" not in redact(f"x-{jwt}") and "c2lnbmF0dXJlMTIz" not in redact(f"jwt={jwt}")


@pytest.mark.parametrize("where", [450, 499, 500, 900, 4000])
def test_safe_str_redacts_what_it_shows_when_the_secret_ends_past_the_cut(where: int) -> None:
    """safe_str redacts its limit plus REDACT_MARGIN characters: a URL's "@host" past the cut still counts."""
    text = "x" * where + f" https://user:{KEY_TAIL}@host.invalid/ " + "y " * 20_000
    assert_no_key(safe_str(text, 500))
    assert len(safe_str(text, 500)) == 500


# --- read_more: the full output is paged only as text redacted as a whole ------------------------------

def _paged(executor: ToolExecutor, result_id: int, page: int) -> list[str]:
    """Every page read_more would hand the model, from offset 0 on."""
    from toolkit.tools.orders import read_more_tool

    read_more, pages, offset = read_more_tool(executor, page), [], 0
    while offset is not None:
        answer = read_more(result_id, offset)
        pages.append(answer["data"]["text"])
        offset = answer["data"]["next_offset"]
    return pages


def test_read_more_never_splits_a_key_across_two_pages() -> None:
    """The key straddles the first page's end: a page cut from the unredacted output held its prefix, too short
    to be recognised, and the next page its rest, recognised by nothing."""
    executor = ToolExecutor(result_max_chars=300)
    text = "y" * 95 + KEY + " 结束"
    result = asyncio.run(executor.execute(lambda: text, "dump"))
    pages = _paged(executor, result.result_id, 100)
    assert len(pages) > 1
    for page in pages:
        assert_no_key(page, "a read_more page")
        assert KEY[:5] not in page  # not even the key's first characters
    assert "".join(pages) == redact(text)


def test_no_read_more_offset_shows_a_secret_the_first_view_masked() -> None:
    """A client_secret is masked by its field name in the model's first view; an offset the model picks (planted
    text can ask for one) used to land on its value, where no field name stands before it."""
    secret = "Zq8wPlm3Kd0sTT"
    records = [{"id": i, "note": "x" * 40} for i in range(30)]
    records[3]["client_secret"] = secret
    executor = ToolExecutor(result_max_chars=300)
    result = asyncio.run(executor.execute(lambda: records, "dump"))
    assert secret not in json.dumps(result.data)
    total = executor.read_artifact(result.result_id)["data"]["total_chars"]
    for offset in range(total):
        page = executor.read_artifact(result.result_id, offset, 100)["data"]["text"]
        assert secret[:6] not in page, (offset, page)
