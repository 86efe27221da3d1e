"""The offline server over real HTTP: the openai SDK against 127.0.0.1, scripted replies, errors, make_client."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from support import sdk_client
from toolkit import ToolResult, format_tool_message
from toolkit.llm import (OFFLINE_MODEL, OfflineAPIError, OfflineServer, Settings, chat_completion, load_settings,
                         make_client, start_offline_server, tool_call)
from toolkit.llm import config as llm_config
from toolkit.llm.offline import TAG

SALES_TOOL = {"type": "function", "function": {
    "name": "analyze_sales_csv", "description": "读取教学销售 CSV，计算总销售额、各类别销售额和销售额最高的类别。",
    "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}}}
SALES_Q = "哪个类别销售额最高？总销售额是多少？"
SEED_003 = {"status": "ok", "data": {
    "row_count": 5, "total_sales": 9692, "highest_category": "显示器", "highest_sales": 4495,
    "category_sales": [{"category": "显示器", "sales": 4495}, {"category": "键盘", "sales": 2985},
                       {"category": "鼠标", "sales": 2212}]}, "source": ["data/input/sales.csv"], "error": None}
ENV_NAMES = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "MODEL_NAME", "OPENAI_BASE_URL")


@pytest.fixture
def server():
    srv = start_offline_server()
    yield srv
    srv.stop()


def sdk(srv: OfflineServer) -> openai.OpenAI:
    return sdk_client(srv.base_url, "offline", timeout=10)


def post(url: str, data: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def user(question: str) -> list[dict]:
    return [{"role": "user", "content": question}]


# --- the round trip through the SDK --------------------------------------------------------------

def test_tool_call_round_trip_without_streaming(server):
    client = sdk(server)
    first = client.chat.completions.create(model=OFFLINE_MODEL, messages=user(SALES_Q), tools=[SALES_TOOL])
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls" and call.function.name == "analyze_sales_csv"

    messages = user(SALES_Q) + [first.choices[0].message.model_dump(exclude_none=True),
                                format_tool_message(call.function.name, call.id, ToolResult(call.function.name, SEED_003))]
    final = client.chat.completions.create(model=OFFLINE_MODEL, messages=messages, tools=[SALES_TOOL])
    text = final.choices[0].message.content
    assert final.choices[0].finish_reason == "stop" and text.startswith(TAG)
    assert "显示器" in text and "4495" in text and "9692" in text
    assert len(server.requests) == 2 and server.requests[1]["messages"][-1]["tool_call_id"] == call.id
    assert server.requests[0]["tools"] == [SALES_TOOL] and server.requests[0]["model"] == OFFLINE_MODEL


def collect(stream) -> tuple[str, dict[int, dict], list[str], object]:
    """Assemble streamed deltas: (content, tool calls by index, finish reasons, usage)."""
    content, calls, finishes, usage = "", {}, [], None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                slot = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = delta.id or slot["id"]
                slot["name"] += (delta.function.name or "") if delta.function else ""
                slot["arguments"] += (delta.function.arguments or "") if delta.function else ""
            if choice.finish_reason:
                finishes.append(choice.finish_reason)
    return content, calls, finishes, usage


def test_streamed_tool_call_and_answer_equal_the_non_streamed_ones(server):
    client = sdk(server)
    plain = client.chat.completions.create(model=OFFLINE_MODEL, messages=user(SALES_Q), tools=[SALES_TOOL])
    stream = client.chat.completions.create(model=OFFLINE_MODEL, messages=user(SALES_Q), tools=[SALES_TOOL],
                                            stream=True, stream_options={"include_usage": True})
    content, calls, finishes, usage = collect(stream)
    expected = plain.choices[0].message.tool_calls[0]
    assert content == "" and finishes == ["tool_calls"] and usage.total_tokens == plain.usage.total_tokens
    assert calls == {0: {"id": expected.id, "name": "analyze_sales_csv", "arguments": expected.function.arguments}}

    text_plain = client.chat.completions.create(model=OFFLINE_MODEL, messages=user("你好，随便聊聊"))
    content, calls, finishes, _ = collect(client.chat.completions.create(
        model=OFFLINE_MODEL, messages=user("你好，随便聊聊"), stream=True))
    assert content == text_plain.choices[0].message.content and content.startswith(TAG)
    assert calls == {} and finishes == ["stop"]


def test_models_endpoint_lists_the_offline_variants(server):
    ids = [m.id for m in sdk(server).models.list()]
    assert OFFLINE_MODEL in ids and "offline-stand-in:loop" in ids and "offline-stand-in:bad-arguments" in ids


# --- bad requests never crash the server ----------------------------------------------------------

@pytest.mark.parametrize("data, code", [(b"{not json", "invalid_json"), (b"[1, 2]", "invalid_request"),
                                        (b'{"model": "offline-stand-in"}', "invalid_request"),
                                        ("{\"messages\": \"\u00e9\"}".encode("latin-1"), "invalid_json")])
def test_bad_bodies_get_openai_style_400_and_the_server_keeps_serving(server, data, code):
    status, body = post(server.base_url + "/chat/completions", data)
    assert status == 400 and body["error"]["code"] == code and body["error"]["message"]
    assert sdk(server).models.list().data


def test_unknown_model_and_unknown_path_are_404(server):
    with pytest.raises(openai.NotFoundError, match="gpt-4o") as caught:
        sdk(server).chat.completions.create(model="gpt-4o", messages=user("hi"))
    assert caught.value.code == "model_not_found"
    status, body = post(server.base_url + "/embeddings", b"{}")
    assert status == 404 and body["error"]["code"] == "not_found"


def test_sdk_sees_a_bad_request_error_for_empty_messages(server):
    with pytest.raises(openai.BadRequestError):
        sdk(server).chat.completions.create(model=OFFLINE_MODEL, messages=[])


# --- scripted responders --------------------------------------------------------------------------

def test_scripted_model_fn_replies_exactly_and_sees_each_request():
    seen: list[dict] = []

    def script(request: dict) -> dict:
        seen.append(request)
        return chat_completion(tool_calls=[tool_call("get_weather", {"city": "上海"}, id="call_w1")])

    with OfflineServer(script) as srv:
        reply = sdk(srv).chat.completions.create(model="any-name", messages=user("上海天气"))
        streamed = collect(sdk(srv).chat.completions.create(model="any-name", messages=user("上海天气"), stream=True))
    call = reply.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_w1", "get_weather", {"city": "上海"})
    assert streamed[1][0]["arguments"] == call.function.arguments and streamed[2] == ["tool_calls"]
    assert [r["model"] for r in seen] == ["any-name", "any-name"] and seen[1]["stream"] is True


@pytest.mark.parametrize("status, error_class", [(401, openai.AuthenticationError), (429, openai.RateLimitError),
                                                 (500, openai.InternalServerError)])
def test_scripted_http_errors_reach_the_sdk_as_its_error_classes(status, error_class):
    def raising(_: dict) -> dict:
        raise OfflineAPIError(status, f"脚本错误 {status}", headers={"retry-after-ms": "5"})

    def returning(_: dict) -> tuple:
        return status, {"error": {"message": "脚本错误", "type": "test", "code": "scripted"}}, {"x-scripted": "1"}

    for script in (raising, returning):
        with OfflineServer(script) as srv:
            with pytest.raises(error_class) as caught:
                sdk(srv).chat.completions.create(model="m", messages=user("hi"))
        assert caught.value.status_code == status


def test_retry_after_header_from_the_script_reaches_the_client():
    with OfflineServer(lambda _: (429, {"error": {"message": "慢一点"}}, {"retry-after": "7"})) as srv:
        with pytest.raises(openai.RateLimitError) as caught:
            sdk(srv).chat.completions.create(model="m", messages=user("hi"))
    assert caught.value.response.headers["retry-after"] == "7"


def test_a_crashing_model_fn_is_a_500_and_the_server_survives():
    calls = {"n": 0}

    def flaky(request: dict) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("bug in the script")
        return chat_completion("好了")

    with OfflineServer(flaky) as srv:
        with pytest.raises(openai.InternalServerError):
            sdk(srv).chat.completions.create(model="m", messages=user("hi"))
        assert sdk(srv).chat.completions.create(model="m", messages=user("hi")).choices[0].message.content == "好了"
        assert [type(e) for e in srv.errors] == [RuntimeError]


def test_model_fn_must_be_callable():
    with pytest.raises(ValueError, match="model_fn"):
        OfflineServer("not a function")  # type: ignore[arg-type]


# --- lifecycle ------------------------------------------------------------------------------------

def test_stop_is_quick_closes_the_port_and_can_be_called_twice():
    srv = start_offline_server()
    port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
    sdk(srv).models.list()
    started = time.perf_counter()
    srv.stop()
    assert time.perf_counter() - started < 1.0 and not srv.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    srv.stop()


def test_concurrent_requests_are_all_answered_and_recorded(server):
    client, errors = sdk(server), []

    def one(i: int) -> None:
        try:
            reply = client.chat.completions.create(model=OFFLINE_MODEL, messages=user(f"问题 {i}"))
            assert reply.choices[0].message.content.startswith(TAG)
        except Exception as exc:  # collected: an assert in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == [] and len(server.requests) == 8


# --- make_client ----------------------------------------------------------------------------------

@pytest.fixture
def clean_env(monkeypatch, tmp_path: Path) -> Path:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / ".env"
    monkeypatch.setattr(llm_config, "default_dotenv_path", lambda: empty)
    return empty


def test_make_client_works_offline_with_no_configuration(clean_env):
    client, model = make_client()
    assert model == OFFLINE_MODEL and client.max_retries == 0 and client.api_key == "offline"
    assert str(client.base_url).startswith("http://127.0.0.1:")
    reply = client.chat.completions.create(model=model, messages=user(SALES_Q), tools=[SALES_TOOL])
    assert reply.choices[0].message.tool_calls[0].function.name == "analyze_sales_csv"


def test_make_client_starts_one_shared_server_even_from_many_threads(clean_env):
    settings = load_settings(dotenv_path=clean_env)
    urls: list[str] = []
    threads = [threading.Thread(target=lambda: urls.append(str(make_client(settings)[0].base_url))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(urls) == 6 and len(set(urls)) == 1


def test_make_client_offline_variant_from_model_name(clean_env, monkeypatch):
    monkeypatch.setenv("MODEL_NAME", "offline-stand-in:unknown-tool")
    client, model = make_client()
    reply = client.chat.completions.create(model=model, messages=user(SALES_Q), tools=[SALES_TOOL])
    assert model == "offline-stand-in:unknown-tool" and reply.model == model
    assert reply.choices[0].message.tool_calls[0].function.name != "analyze_sales_csv"


def test_make_client_for_a_real_endpoint_uses_its_url_key_and_timeout(server):
    key = "sk-test-Endpoint0123456789"
    settings = Settings(server.base_url, OFFLINE_MODEL, key, False, "test")
    client, model = make_client(settings)
    assert str(client.base_url).rstrip("/") == server.base_url and client.api_key == key and client.timeout == 60
    assert client.chat.completions.create(model=model, messages=user("你好")).choices[0].message.content.startswith(TAG)


def test_make_client_rejects_something_that_is_not_settings():
    with pytest.raises(TypeError, match="Settings"):
        make_client({"model": "x"})  # type: ignore[arg-type]


def test_importing_toolkit_does_not_import_openai():
    code = ("import sys, toolkit, toolkit.llm; "
            "assert 'openai' not in sys.modules, 'openai imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_reply_json_cannot_encode_is_a_500_not_a_hung_connection():
    with OfflineServer(lambda _: {"choices": [], "odd": {1, 2}}) as srv:
        with pytest.raises(openai.InternalServerError):
            sdk(srv).chat.completions.create(model="m", messages=user("hi"))
        assert sdk(srv).models.list().data


def test_a_scripted_body_that_cannot_stream_is_a_500():
    with OfflineServer(lambda _: {"id": "x", "choices": []}) as srv:
        with pytest.raises(openai.InternalServerError):
            list(sdk(srv).chat.completions.create(model="m", messages=user("hi"), stream=True))
        assert [type(e) for e in srv.errors] == [IndexError]


# --- one time limit per request, not per read ----------------------------------------------------------------

def _trickle(port: int, head: bytes, body: bytes, every: float) -> tuple[bytes, float]:
    """Send `head` at once, then `body` one byte every `every` seconds; (what the server answered, seconds)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head)
        for i in range(len(body)):
            try:
                conn.sendall(body[i:i + 1])
            except OSError:  # the server gave up and closed: stop sending
                break
            conn.settimeout(every)
            try:
                answer = conn.recv(65536)
            except TimeoutError:
                continue
            conn.settimeout(30)
            rest = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                rest += chunk
            return answer + rest, time.monotonic() - started
        conn.settimeout(30)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        return answer, time.monotonic() - started


def test_a_body_trickled_a_byte_at_a_time_is_refused_when_the_request_time_is_up():
    body = json.dumps({"model": "offline-stand-in", "messages": user("你好")}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with OfflineServer(request_timeout=1.0) as srv:
        answer, took = _trickle(srv._httpd.server_address[1], head, body, every=0.3)
    assert answer.startswith(b"HTTP/1.0 408"), answer[:200]
    assert b"request_timeout" in answer
    assert took < len(body) * 0.3 / 2  # cut off at the limit, long before the trickle would have ended


def test_headers_trickled_a_byte_at_a_time_are_cut_off_too():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 60
    with OfflineServer(request_timeout=1.0) as srv:
        answer, took = _trickle(srv._httpd.server_address[1], b"", head, every=0.3)
        assert answer == b""  # the connection is closed: no request was read, so there is no one to answer
        assert took < len(head) * 0.3 / 2
        status, body = post(srv.base_url + "/chat/completions",
                            json.dumps({"model": "offline-stand-in", "messages": user("你好")}).encode())
    assert status == 200 and body["object"] == "chat.completion"  # and the server keeps serving


def test_a_request_sent_in_time_in_slow_pieces_is_answered():
    body = json.dumps({"model": "offline-stand-in", "messages": user("你好")}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with OfflineServer(request_timeout=5.0) as srv:
        port = srv._httpd.server_address[1]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(head)
            for piece in (body[:10], body[10:30], body[30:]):
                time.sleep(0.2)
                conn.sendall(piece)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.0 200")


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "10", True])
def test_request_timeout_must_be_a_positive_number(value):
    with pytest.raises(ValueError, match="request_timeout"):
        OfflineServer(request_timeout=value)


def test_the_default_limit_is_ten_seconds_per_request():
    assert OfflineServer().request_timeout == 10.0


def test_a_body_shorter_than_its_content_length_is_a_400_saying_so():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    with OfflineServer(request_timeout=5.0) as srv:
        with socket.create_connection(("127.0.0.1", srv._httpd.server_address[1]), timeout=10) as conn:
            conn.sendall(head + b'{"model": 1}')
            conn.shutdown(socket.SHUT_WR)  # the client is done: 12 bytes of the 100 it announced
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.0 400") and b"invalid_length" in answer


def test_make_client_offline_hands_out_one_client_per_server(clean_env):
    """Building an SDK client loads the CA bundle (about 0.1 s): the offline client is built once per server."""
    first, _ = make_client()
    second, _ = make_client()
    assert second is first
