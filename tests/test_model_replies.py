"""The model's reply is untrusted input: malformed HTTP-200 bodies and deeply nested arguments.

Every shape here goes through a real stdlib HTTP server on 127.0.0.1 and the
real openai SDK. Expected: the run stops with stopped="error" and a reason (never
an exception), the CLI prints one Chinese line and exits 1; arguments nested
100,000 deep become an error tool result, never a RecursionError.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import RawReplyServer, scripted_client
from toolkit import ToolRegistry
from toolkit.agent import run_agent
from toolkit.llm.errors import BadModelReply
from toolkit.llm.reply import read_reply

ROOT = Path(__file__).resolve().parent.parent


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.register
    def add(a: int, b: int) -> dict:
        """把两个整数相加"""
        return {"sum": a + b}

    @reg.register
    def lookup(path: list) -> dict:
        """按路径查一个值"""
        return {"depth": 1}

    return reg


def completion(message: object, **choice: object) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "x",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop", **choice}]}


def assistant(**fields: object) -> dict:
    return {"role": "assistant", **fields}


MALFORMED = {
    "message_null": completion(None),
    "content_list": completion(assistant(content=[1, 2])),
    "content_parts_list": completion(assistant(content=[{"type": "text", "text": "hi"}])),
    "content_number": completion(assistant(content=42)),
    "content_object": completion(assistant(content={"text": "hi"})),
    "choices_string": {"id": "x", "choices": "abc"},
    "choices_null": {"id": "x", "choices": None},
    "choices_missing": {"id": "x"},
    "choices_empty": {"id": "x", "choices": []},
    "choices_of_null": {"id": "x", "choices": [None]},
    "choices_of_string": {"id": "x", "choices": ["hello"]},
    "tool_calls_string": completion(assistant(content=None, tool_calls="add")),
    "tool_calls_of_null": completion(assistant(content=None, tool_calls=[None])),
    "tool_calls_object": completion(assistant(content=None, tool_calls={"id": "c"})),
    "function_string": completion(assistant(content=None, tool_calls=[{"id": "c", "type": "function",
                                                                      "function": "add"}])),
    "function_name_number": completion(assistant(content=None, tool_calls=[
        {"id": "c", "type": "function", "function": {"name": 7, "arguments": "{}"}}])),
    "body_array": [],
    "body_string": "hello",
    "body_null": None,
    "body_number": 3,
}
RAW = {
    "html_body": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "html_as_json": (b"<html><body>oops</body></html>", "application/json"),
    "invalid_json": (b'{"choices": [', "application/json"),
    "empty_body": (b"", "application/json"),
    "plain_text": ("你好，我是模型".encode(), "text/plain; charset=utf-8"),
    "deep_body": (b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "application/json"),
}


def _shapes() -> list[tuple[str, bytes, str]]:
    shapes = [(name, json.dumps(body).encode(), "application/json") for name, body in MALFORMED.items()]
    return shapes + [(name, body, kind) for name, (body, kind) in RAW.items()]


@pytest.mark.parametrize("name, body, content_type", _shapes(), ids=[s[0] for s in _shapes()])
def test_malformed_reply_stops_the_run_with_an_error_reason(name, body, content_type):
    with RawReplyServer(body, content_type) as server:
        run = run_agent("1 加 2 等于几？", client=server.client(), model="x", registry=registry(), max_turns=2)
    assert run.stopped == "error" and not run.ok, run.answer
    assert run.error and "\n" not in run.answer
    assert run.answer.startswith(("模型接口返回了无法使用的回复", "调用模型失败", "模型没有返回文本回答")), run.answer


def _cli(base_url: str) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "MODEL_", "TOOLKIT_"))}
    env.update(PYTHONUTF8="1", TOOLKIT_DOTENV="none", MODEL_BASE_URL=base_url, MODEL_NAME="x",
               OPENAI_API_KEY="sk-cli-secret-0123456789abcdef")
    return subprocess.run([sys.executable, "-m", "toolkit.agent", "哪个类别销售额最高？"], capture_output=True,
                          text=True, encoding="utf-8", env=env, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("name", ["message_null", "choices_string", "tool_calls_of_null", "html_body",
                                  "invalid_json"])
def test_cli_prints_one_chinese_line_and_exits_1_for_a_malformed_reply(name):
    body, content_type = RAW.get(name) or (json.dumps(MALFORMED[name]).encode(), "application/json")
    with RawReplyServer(body, content_type) as server:
        proc = _cli(server.base_url)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "模型" in lines[0] and "sk-cli-secret" not in proc.stderr


def test_read_reply_gives_tool_call_arguments_as_text_and_ids_to_calls_without_one():
    reply = read_reply(completion(assistant(content=None, tool_calls=[
        {"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}])), turn=3)
    assert reply.tool_calls == [{"id": "call_3_1", "type": "function",
                                 "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]


def test_read_reply_refuses_a_non_completion_with_bad_model_reply_only():
    for body in (None, 3, "x", [], {"choices": [{"message": {"content": 5}}]}):
        with pytest.raises(BadModelReply):
            read_reply(body)


# --- deeply nested arguments --------------------------------------------------------------------

DEEP = 100_000


def _nested(shape: str) -> str:
    if shape == "list":
        return '{"path": ' + "[" * DEEP + "]" * DEEP + "}"
    if shape == "object":
        return '{"path": ' + '{"a":' * DEEP + "1" + "}" * DEEP + "}"
    if shape == "mixed":
        return '{"path": ' + '[{"a":' * (DEEP // 2) + "1" + "}]" * (DEEP // 2) + "}"
    if shape == "top_level":
        return "[" * DEEP + "]" * DEEP
    return '{"path": ' + "[" * DEEP  # unterminated


@pytest.mark.parametrize("shape", ["list", "object", "mixed", "top_level", "unterminated"])
def test_deeply_nested_arguments_become_an_error_tool_result(shape):
    arguments = _nested(shape)
    client, _ = scripted_client([{"tool_calls": [("lookup", arguments)]},
                                 {"tool_calls": [("lookup", arguments)]},
                                 {"content": "参数有误，无法查询。"}])
    run = run_agent("查一下这个路径", client=client, model="scripted", registry=registry(), max_turns=4)
    assert run.stopped == "answered"
    first = run.tool_results[0]
    assert first.status == "error" and first.error_code in ("INVALID_ARGUMENTS_JSON", "INVALID_ARGUMENTS")
    assert run.tool_results[1].status == "error"  # the same call again: refused as a repeat or again as bad


# --- fuzzing the model's reply ---------------------------------------------------------------------

QUICK, SLOW = 40, 400  # reply bodies per run: the default suite, and the `slow` run the README counts
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)
_call = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.text(max_size=6), _json), "type": st.one_of(st.just("function"), _json),
    "function": st.one_of(_json, st.fixed_dictionaries({}, optional={
        "name": st.one_of(st.sampled_from(["add", "lookup", "", "nope"]), _json),
        "arguments": st.one_of(st.sampled_from(['{"a": 1, "b": 2}', "{", "[]", '{"a": "x"}']), _json)}))})
_message = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "role": st.one_of(st.just("assistant"), _json), "content": st.one_of(st.text(max_size=20), _json),
    "tool_calls": st.one_of(st.lists(st.one_of(_call, _json), max_size=3), _json)}))
_choice = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "message": _message, "finish_reason": st.one_of(st.sampled_from(["stop", "tool_calls"]), _json)}))
_body = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "id": _json, "object": _json, "choices": st.one_of(st.lists(_choice, max_size=2), _json)}))


@pytest.fixture(scope="module")
def fuzz_endpoint():
    with RawReplyServer(b"{}") as server:
        yield server, server.client()  # one client: building an SDK client costs more than a request


def _one_fuzzed_run(endpoint, body) -> None:
    server, client = endpoint
    server.body = json.dumps(body).encode()
    run = run_agent("1 加 2 等于几？", client=client, model="x", registry=registry(), max_turns=2)
    assert run.stopped in ("answered", "max_turns", "error")
    assert isinstance(run.answer, str) and run.answer
    if run.stopped == "error":
        assert run.error
    json.dumps(run.messages, ensure_ascii=False)  # the conversation stays sendable


_FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(max_examples=QUICK, **_FUZZ)
@given(body=_body)
def test_fuzzed_model_replies_never_raise_out_of_run_agent(fuzz_endpoint, body):
    _one_fuzzed_run(fuzz_endpoint, body)


@pytest.mark.slow
@settings(max_examples=SLOW, **_FUZZ)
@given(body=_body)
def test_fuzzed_model_replies_never_raise_out_of_run_agent_long(fuzz_endpoint, body):
    _one_fuzzed_run(fuzz_endpoint, body)
