"""The offline server: the OpenAI Chat Completions wire protocol on 127.0.0.1, stdlib only.

The openai SDK talks to it exactly as to a real endpoint, so no chapter needs
an `if offline:` branch. POST /v1/chat/completions answers with the offline
model (or a scripted `model_fn`), as one JSON body or, with "stream": true, as
text/event-stream chunks ending in `data: [DONE]`. GET /v1/models lists the
offline models. Bad requests get OpenAI-style error JSON, never a crash.

A scripted model_fn takes the request body (a dict) and returns a response
body dict (see `chat_completion`), or a tuple (status_code, body) /
(status_code, body, headers), or raises OfflineAPIError(status, message, ...)
to send 401, 429, 500 and the like.
"""
from __future__ import annotations

import io
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from .offline import OfflineAPIError, offline_model_names, respond

__all__ = ["OfflineServer", "start_offline_server", "shared_offline_server", "ModelFn"]

ModelFn = Callable[[dict], Any]
MAX_BODY_BYTES = 32 * 1024 * 1024
REQUEST_TIMEOUT = 10.0  # seconds a client may take to send one whole request (line, headers and body)
_PIECE = 12  # characters per streamed content/arguments piece


def _error(status: int, message: str, code: str, param: str | None = None) -> tuple[int, dict, dict]:
    return status, OfflineAPIError(status, message, code=code, param=param).body(), {}


def _as_reply(value: Any) -> tuple[int, dict, dict]:
    """Normalize what a model_fn returned: dict, (status, body) or (status, body, headers)."""
    if isinstance(value, dict):
        return 200, value, {}
    if isinstance(value, tuple) and len(value) in (2, 3) and isinstance(value[0], int) and 100 <= value[0] <= 599:
        headers = value[2] if len(value) == 3 and isinstance(value[2], dict) else {}
        body = value[1] if isinstance(value[1], dict) else {"error": {"message": str(value[1])}}
        return value[0], body, headers
    return _error(500, "离线服务器：model_fn 返回了无法识别的值（应为 dict 或 (状态码, dict[, headers])）",
                  "bad_model_fn_reply")


def _chunks(body: dict, include_usage: bool) -> Iterator[dict]:
    """A chat.completion body as the chat.completion.chunk events a streaming API sends."""
    head = {k: body.get(k) for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    choice = body["choices"][0]
    message = choice.get("message") or {}

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    content = message.get("content") or ""
    for i in range(0, len(content), _PIECE):
        yield chunk({"content": content[i:i + _PIECE]})
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        yield chunk({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                     "function": {"name": fn.get("name"), "arguments": ""}}]})
        arguments = fn.get("arguments") or ""
        for i in range(0, len(arguments), _PIECE):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + _PIECE]}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield {**head, "choices": [], "usage": body.get("usage")}


class _DeadlineReader(io.RawIOBase):
    """A socket's reading side with one deadline for the whole request, not one timeout per read.

    Before each read the socket's timeout is set to the time left, so a client
    that trickles its request a byte at a time is cut off when the request's
    time is up, however often it sends.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock, self._deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took longer than its time limit")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    server: "_HTTPServer"
    protocol_version = "HTTP/1.0"
    server_version = "OfflineStandIn/1.0"
    timeout = REQUEST_TIMEOUT  # also the limit for writing the reply

    def setup(self) -> None:
        super().setup()
        limit = self.server.owner.request_timeout
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, time.monotonic() + limit))

    def log_message(self, format: str, *args: Any) -> None:  # keep notebooks' stderr clean
        pass

    # --- sending -------------------------------------------------------------------
    def _send_json(self, status: int, body: dict, headers: dict | None = None) -> None:
        try:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError):  # a scripted body json cannot encode
            status, body, headers = _error(500, "离线服务器：回复体无法编码为 JSON", "server_error")
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(str(name), str(value))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, body: dict, include_usage: bool) -> None:
        # encode first: a bad body is a 500, not half a stream
        events = [json.dumps(e, ensure_ascii=False) for e in _chunks(body, include_usage)]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {event}\n\n".encode("utf-8"))
        self.wfile.write(b"data: [DONE]\n\n")

    # --- routes --------------------------------------------------------------------
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        models = [{"id": name, "object": "model", "created": 0, "owned_by": "tool-result-lab"}
                  for name in offline_model_names()]
        if path == "/v1/models":
            return self._safe(lambda: self._send_json(200, {"object": "list", "data": models}))
        wanted = path.removeprefix("/v1/models/")
        match = next((m for m in models if path.startswith("/v1/models/") and m["id"] == wanted), None)
        if match is not None:
            return self._safe(lambda: self._send_json(200, match))
        self._safe(lambda: self._send_json(*_error(404, f"没有这个地址：GET {self.path[:80]}", "not_found")))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            missing = _error(404, f"没有这个地址：POST {self.path[:80]}", "not_found")
            return self._safe(lambda: self._send_json(*missing))
        self._safe(self._chat)

    def _safe(self, action: Callable[[], None]) -> None:
        try:
            self.connection.settimeout(self.timeout)  # reading left the time the request had left
            action()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client went away; nothing to tell it

    def _read_json(self) -> Any:
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            raise OfflineAPIError(413 if length > 0 else 400, "请求体长度无效或超过 32 MB", code="invalid_length")
        try:
            raw = self.rfile.read(length)
        except (TimeoutError, OSError):
            raise OfflineAPIError(408, "请求没有在时限内发完（超时）", code="request_timeout") from None
        finally:
            self.connection.settimeout(self.timeout)  # writing the reply gets its own time
        if len(raw) < length:
            raise OfflineAPIError(400, "请求体比 Content-Length 说的短（连接提前关闭）", code="invalid_length")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise OfflineAPIError(400, "请求体不是合法的 JSON", code="invalid_json") from None

    def _chat(self) -> None:
        owner = self.server.owner
        request: Any = None
        try:
            request = self._read_json()
            if not isinstance(request, dict):
                raise OfflineAPIError(400, "请求体必须是 JSON 对象", code="invalid_request")
            owner._record(request)
            if not isinstance(request.get("messages"), list) or not request["messages"]:
                raise OfflineAPIError(400, "缺少 messages：需要一个非空的消息列表", code="invalid_request",
                                      param="messages")
            status, body, headers = _as_reply(owner.model_fn(request))
        except OfflineAPIError as exc:
            status, body, headers = exc.status_code, exc.body(), exc.headers
        except Exception as exc:  # a bug in a model_fn must not take the server down
            owner.errors.append(exc)
            status, body, headers = _error(500, f"离线服务器内部错误：{type(exc).__name__}", "server_error")
        if status != 200 or not (isinstance(request, dict) and request.get("stream") is True):
            return self._send_json(status, body, headers)
        options = request.get("stream_options")
        try:
            self._send_stream(body, isinstance(options, dict) and options.get("include_usage") is True)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            owner.errors.append(exc)
            self._send_json(*_error(500, "离线服务器：回复体不是 chat.completion，无法转成流", "server_error"))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: "OfflineServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record instead of printing a traceback to stderr (notebooks compare stderr)."""
        import sys

        self.owner.errors.append(sys.exc_info()[1])


class OfflineServer:
    """A Chat Completions server on 127.0.0.1 for the offline model or a scripted model_fn.

    `base_url` ends in "/v1"; `requests` lists the JSON bodies received (at most
    `max_recorded`, the newest kept); `errors` the exceptions a model_fn raised.
    A client has `request_timeout` seconds (default 10) to send a whole request:
    one limit for the request line, headers and body together, so a body
    trickled a byte at a time gets 408 when the time is up (a request line or
    headers still unfinished then: the connection is closed).
    Use start()/stop() or `with OfflineServer() as server:`. Port 0 picks a
    free port. Raises ValueError for a model_fn that is not callable.
    """

    def __init__(self, model_fn: ModelFn | None = None, *, port: int = 0,
                 max_recorded: int | None = None, request_timeout: float = REQUEST_TIMEOUT) -> None:
        if model_fn is not None and not callable(model_fn):
            raise ValueError(f"model_fn 应是一个函数（请求 dict -> 回复），收到 {type(model_fn).__name__}：请传函数本身")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port 应是 0 到 65535 的整数（0 表示任选一个空闲端口），收到 {port!r}：请改成这个范围里的数")
        if isinstance(request_timeout, bool) or not isinstance(request_timeout, (int, float)) \
                or not 0 < request_timeout < float("inf"):
            raise ValueError(f"request_timeout 应是大于 0 的秒数，收到 {request_timeout!r}：请改成正数，例如 10")
        self.request_timeout = float(request_timeout)
        self.model_fn: ModelFn = model_fn or respond
        self.port = port
        self.max_recorded = max_recorded
        self.requests: list[dict] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _record(self, request: dict) -> None:
        with self._lock:
            self.requests.append(request)
            if self.max_recorded is not None and len(self.requests) > self.max_recorded:
                del self.requests[: len(self.requests) - self.max_recorded]

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1 (RuntimeError before start())."""
        if self._httpd is None:
            raise RuntimeError("离线模型服务还没有启动：请先调用 start()，或用 start_offline_server()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "OfflineServer":
        """Start serving in a daemon thread (no-op if already running); returns self."""
        with self._lock:
            if self.running:
                return self
            httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
            httpd.owner = self
            self._httpd = httpd
            self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="offline-model-server", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop serving and close the socket; safe to call twice."""
        with self._lock:
            httpd, thread = self._httpd, self._thread
            self._thread = None
        if httpd is None or thread is None:
            return
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout)

    def __enter__(self) -> "OfflineServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"OfflineServer({where}, requests={len(self.requests)})"


def start_offline_server(model_fn: ModelFn | None = None, *, port: int = 0) -> OfflineServer:
    """A started OfflineServer (stop it with .stop() or use it in a with block)."""
    return OfflineServer(model_fn, port=port).start()


_shared: OfflineServer | None = None
_shared_lock = threading.Lock()


def shared_offline_server() -> OfflineServer:
    """The process-wide offline server that make_client uses; started once, thread-safe."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = OfflineServer(max_recorded=1000).start()
        return _shared
