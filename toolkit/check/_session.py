"""The referee's end of one worker's pipe: requests, and the worker's asks checked against a fixed vocabulary.

The referee lends nothing (see _remote.py and ARCHITECTURE.md's table): every message from the worker is JSON,
read within MAX_MESSAGE bytes and checked field by field (MESSAGES) before anything acts on it, and an ask names
an offered tool or model by number and is answered with plain data. Anything else ends the worker (Tampered).
"""
from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import itertools
import json
import time
from typing import Any, Callable

from ..redaction import safe_str
from ._bridge import BridgeClock, CallableWorkerRef, Offer, WorkerRef
from ._errors import CheckerError, Crashed, Hang, Raised, Tampered
from ._plain import Malformed, decode
from ._remote import ExcSpec

MAX_MESSAGE = 16 * 2**20  # bytes of one message from the worker
MAX_ID = 2**53


def _count(v: Any) -> bool:
    return type(v) is int and 0 <= v < MAX_ID


def _seconds(v: Any) -> bool:
    return type(v) in (int, float) and v >= 0  # NaN fails; inf is a hang, as on a SimulatedClock


def _raised(v: Any) -> bool:
    return (type(v) is dict and set(v) <= {"names", "message", "line", "text"} and type(v.get("names")) is list
            and bool(v["names"]) and all(type(n) is str for n in v["names"]) and type(v.get("message")) is str
            and type(v.get("line", 0)) in (int, type(None)) and type(v.get("text", "")) is str)


FIELDS: dict[str, Callable[[Any], bool]] = {  # a field's name decides its type, in every message
    "id": _count, "tool": _count, "client": _count, "seq": _count, "n": _count, "seen": _count,
    "seconds": _seconds, "request": lambda v: type(v) is dict, "raised": _raised, "failed": _raised,
    "error": _raised, "unpicklable": _raised, "printed": lambda v: type(v) is str,
    "sleeps": lambda v: type(v) is list and all(type(s) is list and len(s) == 2 and type(s[0]) is str and _seconds(s[1])
                                                for s in v),
    "args": lambda v: type(v) is list, "kwargs": lambda v: type(v) is dict, "value": lambda v: True,  # (decode)
    "where": lambda v: type(v) is str, "asked": lambda v: type(v) is str, "blob": lambda v: type(v) is str,
    "ok": lambda v: v is True, "missing": lambda v: v is True,
}
ANSWER = {"value", "raised"}  # an answer carries one of these
MESSAGES: dict[str | None, tuple[set, set]] = {  # op: (required fields, optional ones); None: a request's answer
    op: (set(required.split()), set(optional.split())) for op, required, optional in (
        ("tool", "id tool args kwargs", ""), ("await", "id", ""), ("cancel", "id", ""),
        ("model", "id client request", ""), ("now", "id", ""), ("sleep", "id seconds", ""), ("idle", "seen", ""),
        ("ret", "seq", "value raised"), ("result", "n args kwargs printed sleeps", "value raised"),
        (None, "", "value raised failed where asked ok error blob missing unpicklable printed sleeps"))}


def checked(message: Any) -> dict:
    """`message` if it is one of MESSAGES with every field of its type; Malformed otherwise."""
    if type(message) is not dict:
        raise Malformed("不是一个 JSON 对象")
    op = message.get("op")
    if op not in MESSAGES or (op is None and "op" in message):
        raise Malformed(f"不认识的消息 {safe_str(op, 40)}")
    (required, optional), fields = MESSAGES[op], set(message) - {"op"}
    if not required <= fields <= required | optional or (op in ("ret", "result") and len(fields & ANSWER) != 1):
        raise Malformed(f"{op} 消息的字段不对：{sorted(fields)[:8]}")
    wrong = [name for name in fields if not FIELDS[name](message[name])]
    if wrong:
        raise Malformed(f"{op} 消息的 {wrong[0]} 不对")
    return message


class Session:
    """The referee's end of one worker's pipe: the deadline, what it offered the worker, the asks pending."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.ids = itertools.count(1)
        self.sent = 0
        self.idle = False  # the worker has handled everything sent to it and waits on the referee (time may move)
        self.deadline: float | None = None
        self.limit = 0.0
        self.clock: BridgeClock | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.offered: dict[int, tuple[Any, str, Callable, bool]] = {}  # number -> (object, kind, what answers, sync)
        self.last_id = 0  # the worker's ids only grow: one seen before is a replay
        self.pending: dict[int, Any] = {}  # an async tool's call asked for: its coroutine, until the worker awaits it
        self.tasks: dict[int, asyncio.Future] = {}
        self.printed = ""
        self.sleeps: list = []
        self.fault: BaseException | None = None  # a Hang or Crashed during this run (a probe may swallow it)

    # --- the pipe -------------------------------------------------------------------------------
    def start(self, limit: float) -> None:
        """A run of a probe begins: one deadline for all of it, as one request had."""
        self.limit = limit
        self.deadline = time.monotonic() + limit
        self.fault = None

    def send(self, message: tuple) -> None:
        try:
            self.proc.conn.send(message)
        except (OSError, ValueError, EOFError):
            self._crashed()
        self.sent += 1
        self.idle = False

    def poll(self, timeout: float) -> bool:
        try:
            return self.proc.conn.poll(timeout)
        except (OSError, ValueError, EOFError):
            self._crashed()
        return False

    def receive_later(self) -> None:
        """Block until the worker says something, or end it at the deadline (Hang)."""
        remaining = (self.deadline or time.monotonic() + self.limit) - time.monotonic()
        if not self.poll(max(remaining, 0.0)):
            self.proc.kill()
            self.fault = Hang(self.limit)
            raise self.fault

    def receive(self) -> dict:
        """The worker's next message, checked (Tampered when it is not one of MESSAGES)."""
        try:
            data = self.proc.conn.recv_bytes(MAX_MESSAGE)
        except EOFError:
            self._crashed()
        except OSError:  # longer than MAX_MESSAGE ("bad message length"), or the pipe broke
            if self.proc.process.is_alive():
                self.refuse(f"一条消息超过了 {MAX_MESSAGE} 字节")
            self._crashed()
        try:
            message = checked(json.loads(data.decode("utf-8")))
        except (ValueError, RecursionError) as exc:  # Malformed, bad JSON, a number too long
            self.refuse(str(exc) if isinstance(exc, Malformed) else f"不是 JSON（{type(exc).__name__}）")
        self.idle = message.get("op") == "idle" and message["seen"] == self.sent
        return message

    def refuse(self, why: str) -> None:
        self.proc.kill()
        self.fault = Tampered(why)
        raise self.fault

    def _crashed(self) -> None:
        self.proc.process.join(2)
        code = self.proc.process.exitcode
        self.proc.kill()
        self.fault = Crashed(code)
        raise self.fault from None

    def answer_to(self, message: tuple, op: str | None = None, seq: int | None = None) -> dict:
        """Send `message`; the worker's answer (op, with its seq), its asks meanwhile answered."""
        self.send(message)
        while True:
            self.receive_later()
            answer = self.receive()
            if answer.get("op") == op and answer.get("seq") == seq:
                return answer
            self.handle(answer)

    def request(self, message: tuple, limit: float) -> dict:
        """A plain request (load, call, a loader's cell): its answer."""
        self.deadline, self.limit = time.monotonic() + limit, limit
        return self.answer_to(message)

    def op(self, target: int, kind: str, payload: Any) -> Any:
        """A question about a worker handle (getattr, list, len...), answered there by the student's code."""
        seq = next(self.ids)
        message = self.answer_to(("op", seq, target, kind, payload), "ret", seq)
        if "raised" in message:
            raised = message["raised"]
            if "AttributeError" in raised["names"]:
                raise AttributeError(raised["message"])
            raise Raised(raised["names"], raised["message"])
        return self.take(message["value"])

    # --- values both ways ---------------------------------------------------------------------
    def node(self, data: Any) -> WorkerRef:
        """A handle in a value from the worker: {"r": [n, callable, shown]}."""
        if not (type(data) is list and len(data) == 3 and _count(data[0]) and type(data[1]) is bool):
            raise Malformed("句柄不对")
        return (CallableWorkerRef if data[1] else WorkerRef)(self, data[0], decode({"o": data[2]}))

    def take(self, data: Any, handles: bool = True) -> Any:
        """A value from the worker (Tampered when it is not what encode() writes, or a handle where none can be)."""
        try:
            return decode(data, self.node if handles else None)
        except (Malformed, RecursionError) as exc:
            self.refuse(f"值不对（{exc}）")

    def export(self, value: Any) -> Any:
        """A referee value as the worker gets it: plain data as it is, a toolkit dataclass of plain data as a copy, an
        Offer as its Spec. Nothing else crosses (CheckerError)."""
        t = type(value)
        if value is None or t in (bool, int, float, str, bytes):
            return value
        if t in (list, tuple):
            return t(self.export(v) for v in value)
        if t is dict:
            return {self.export(k): self.export(v) for k, v in value.items()}
        if isinstance(value, Offer):
            return value.spec(self)
        if t.__module__.startswith("toolkit.") and isinstance(value, enum.Enum):
            return value  # ErrorCode: a value, like the string it is
        if t.__module__.startswith("toolkit.") and dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):  # a ToolResult, an Attempt: a copy, when every field is plain data
                self.export(getattr(value, f.name))
            return value
        raise CheckerError(f"the referee hands the worker plain data only, not a {t.__name__}")

    def offer(self, obj: Any, kind: str, answer: Callable, sync: bool = True) -> int:
        """The number the worker asks `obj` (a tool, a model) by; `answer(*args, **kwargs)` runs here for each ask."""
        n = next((n for n, offer in self.offered.items() if offer[0] is obj), None) or next(self.ids)
        self.offered[n] = (obj, kind, answer, sync)
        return n

    def exception(self, exc: BaseException) -> tuple:
        """An exception raised here (a tool's failure, on purpose) as the worker raises it: of plain data only."""
        cls, fields = type(exc), dict(getattr(exc, "__dict__", {}))
        if cls.__module__ == "builtins" or cls.__module__.startswith("toolkit."):
            try:
                return ("raise", ExcSpec(cls, self.export(tuple(exc.args)), self.export(fields)))
            except CheckerError:  # something in it is not plain data: its message crosses
                pass
        return ("raise", ExcSpec(RuntimeError, (safe_str(exc, 500),), {}))

    # --- answering the worker ------------------------------------------------------------------
    def handle(self, message: dict) -> None:
        """One checked message from the worker that is not the answer awaited: an ask, answered (or refused)."""
        op = message.get("op")
        if op in (None, "ret", "result"):
            self.refuse(f"没有人在等的 {op or '回答'}")
        if op in ("tool", "model", "now", "sleep"):
            if message["id"] <= self.last_id:
                self.refuse(f"{op} 的编号 {message['id']} 用过了")
            self.last_id = message["id"]
        getattr(self, f"on_{op}")(message)

    def answer(self, n: int, outcome: tuple) -> None:
        try:
            self.send(("done", n, outcome))
        except (Hang, Crashed):  # the worker is gone (also when a callback answers): the next poll says so
            pass

    def _offered(self, n: int, kind: str) -> tuple[Callable, bool]:
        found = self.offered.get(n)
        if found is None or found[1] != kind:
            self.refuse(f"检查器没有给过编号 {n} 的{'工具' if kind == 'tool' else '模型'}")
        return found[2], found[3]

    def on_tool(self, message: dict) -> None:
        run, sync = self._offered(message["tool"], "tool")
        args, kwargs = self.take(message["args"], False), self.take(message["kwargs"], False)
        if type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
            self.refuse("工具的参数不对")
        outcome = self._call(run, args, kwargs, plain=sync)
        if sync:
            self.answer(message["id"], outcome)
        else:
            self.pending[message["id"]] = outcome  # run when the worker awaits it (never, if it forgot to)

    def _call(self, run: Callable, args: list, kwargs: dict, plain: bool = True) -> Any:
        """One ask's outcome: ("value", plain data) (not `plain`: what `run` returned), or its exception."""
        try:
            value = run(*args, **kwargs)
            return ("value", self.export(value)) if plain else value
        except CheckerError:
            raise
        except Exception as exc:  # a tool's failure on purpose (a scripted timeout), or what the tool or model refused
            return self.exception(exc)

    def on_await(self, message: dict) -> None:
        n = message["id"]
        call = self.pending.pop(n, None)
        if call is None:
            self.refuse(f"await 的调用 {n} 不存在或已经 await 过了")
        if type(call) is tuple:  # it failed when it was asked for
            return self.answer(n, call)
        if self.loop is None:
            call.close()
            return self.answer(n, ("raise", ExcSpec(RuntimeError, ("检查器：这里不能 await 工具（检查已经结束）",), {})))

        def done(future: asyncio.Future) -> None:
            self.tasks.pop(n, None)
            if future.cancelled():
                return
            exc = future.exception()
            self.answer(n, self.exception(exc) if exc is not None else ("value", self.export(future.result())))

        self.tasks[n] = task = asyncio.ensure_future(call, loop=self.loop)
        task.add_done_callback(done)

    def on_cancel(self, message: dict) -> None:
        """A sleep, a call or an await the worker dropped (a timeout won the race); an old one is let be."""
        n = message["id"]
        if self.clock is not None:
            self.clock.remote_cancel(n)
        task, call = self.tasks.pop(n, None), self.pending.pop(n, None)
        if task is not None:
            task.cancel()
        if inspect.iscoroutine(call):
            call.close()

    def on_model(self, message: dict) -> None:
        create, _ = self._offered(message["client"], "model")
        self.answer(message["id"], self._call(create, [message["request"]], {}))

    def on_now(self, message: dict) -> None:
        self.answer(message["id"], ("value", self.clock.now()) if self.clock is not None else _NO_CLOCK)

    def on_sleep(self, message: dict) -> None:
        if self.clock is None:
            return self.answer(message["id"], _NO_CLOCK)
        n, waiter = message["id"], self.loop.create_future()
        waiter.add_done_callback(lambda f: f.cancelled() or self.answer(n, ("value", None)))
        self.clock.remote_sleep(n, float(message["seconds"]), waiter)

    def on_idle(self, message: dict) -> None:
        """The worker waits on the referee (seen in receive(): time may move)."""

    def finish(self, message: dict, args: tuple, kwargs: dict) -> Any:
        """The answer to an invoke: what it did to its arguments, its prints and waits, its value."""
        for given, after in zip(args, message["args"]):
            _restore(given, self.take(after))
        for key, after in message["kwargs"].items():
            _restore(kwargs.get(key), self.take(after))
        self.printed += message["printed"]
        self.sleeps += message["sleeps"]
        if "raised" in message:
            raised = message["raised"]
            raise Raised(raised["names"], raised["message"], message["printed"])
        return self.take(message["value"])

    def close_coroutines(self) -> None:
        for call in self.pending.values():
            if inspect.iscoroutine(call):
                call.close()  # asked for and never awaited: no "never awaited" warning
        self.pending = {}


_NO_CLOCK = ("raise", ExcSpec(RuntimeError, ("检查器的模拟时钟只在检查的场景里可用",), {}))


def _restore(given: Any, after: Any) -> None:
    """Copy back what the worker's call did to a list or dict argument (the referee's object, in place)."""
    if type(given) is list and type(after) is list:
        given[:] = after
    elif type(given) is dict and type(after) is dict:
        given.clear()
        given.update(after)
