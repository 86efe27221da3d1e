"""The referee's end of one worker's pipe: requests, the objects lent to the worker, the callbacks answered.

See _remote.py for the protocol and _bridge.py for the scenario side (the clock, the worker's handles, a
remote call). Every message from the worker is JSON; every question it asks is answered here from the
referee's own objects, and only about their public attributes: a name starting with "_" (other than
__name__, __doc__...) is refused, so a proxy is no way into the referee's modules.
"""
from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import itertools
import json
import pickle
import time
from typing import Any

from ..clock import SimulatedClock
from ._bridge import BridgeClock, CallableWorkerRef, WorkerRef
from ._errors import Crashed, Hang, Raised
from ._plain import Foreign, decode
from ._remote import ArgRef, ExcSpec, ObjRef

PUBLIC_DUNDERS = ("__name__", "__qualname__", "__doc__", "__module__")  # the only "_" names a worker may read


class Session:
    """The referee's end of one worker's pipe: the objects lent to it, the deadline, the accounting."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.objects: dict[int, Any] = {}
        self.by_identity: dict[int, ObjRef] = {}
        self.ids = itertools.count(1)
        self.sent = 0
        self.idle = False
        self.deadline: float | None = None
        self.limit = 0.0
        self.clock: BridgeClock | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.tasks: dict[int, asyncio.Future] = {}
        self.coroutines: list = []
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
        try:
            data = self.proc.conn.recv_bytes()
        except (OSError, ValueError, EOFError):
            self._crashed()
        message = json.loads(data.decode("utf-8"))
        self.idle = message.get("op") == "idle" and message.get("seen") == self.sent
        return message

    def _crashed(self) -> None:
        self.proc.process.join(2)
        code = self.proc.process.exitcode
        self.proc.kill()
        self.fault = Crashed(code)
        raise self.fault from None

    def worker_idle(self) -> bool:
        """The worker has handled everything sent to it and waits on the referee (time may move)."""
        return self.idle

    def request(self, message: tuple, limit: float) -> dict:
        """A plain request (load, call, a loader's cell): its answer; callbacks meanwhile are answered."""
        self.deadline, self.limit = time.monotonic() + limit, limit
        self.send(message)
        while True:
            self.receive_later()
            answer = self.receive()
            if "op" not in answer:
                return answer
            self.handle(answer)

    def op(self, target: int, kind: str, payload: Any) -> Any:
        """A question about a worker handle (getattr, list, len...), answered there by the student's code."""
        seq = next(self.ids)
        self.send(("op", seq, target, kind, payload))
        while True:
            self.receive_later()
            message = self.receive()
            if message.get("op") == "ret" and message.get("seq") == seq:
                break
            self.handle(message)
        if "raised" in message:
            raised = message["raised"]
            if "AttributeError" in raised["names"]:
                raise AttributeError(raised["message"])
            raise Raised(raised["names"], raised["message"])
        return self.take(message["value"])

    # --- values both ways ---------------------------------------------------------------------
    def node(self, data: dict) -> Any:
        if "p" in data:
            return self.objects.get(data["p"], Foreign("object", "", "", "<未知对象>", True))
        if "r" in data:
            n, is_callable, fields = data["r"]
            return (CallableWorkerRef if is_callable else WorkerRef)(self, n, fields)
        return Foreign("object", "", "", "<无法识别的数据>", True)

    def take(self, data: Any) -> Any:
        return decode(data, self.node)

    def export(self, value: Any) -> Any:
        """A referee value as the worker gets it: plain data as it is, a worker handle back as itself,
        a toolkit dataclass of plain data as a copy, anything else as a reference that stays here."""
        t = type(value)
        if value is None or t in (bool, int, float, str, bytes):
            return value
        if isinstance(value, WorkerRef) and value.session is self:
            return ArgRef(value.id)
        if t in (list, tuple):
            return t(self.export(v) for v in value)
        if t is dict:
            return {self.export(k): self.export(v) for k, v in value.items()}
        if _value_dataclass(value):
            return value
        return self.lend(value)

    def lend(self, value: Any) -> ObjRef:
        """A reference to a referee object: the worker's proxy of it asks here for everything."""
        ref = self.by_identity.get(id(value))
        if ref is None or self.objects.get(ref.id) is not value:
            n = next(self.ids)
            self.objects[n] = value
            ref = ObjRef(n, callable(value), inspect.isawaitable(value))
            self.by_identity[id(value)] = ref
            if inspect.iscoroutine(value):
                self.coroutines.append(value)
        return ref

    def exception(self, exc: BaseException) -> tuple:
        fields = {k: self.export(v) for k, v in getattr(exc, "__dict__", {}).items()}
        spec = ExcSpec(type(exc), tuple(self.export(a) for a in exc.args), fields)
        try:
            pickle.dumps(spec)
        except Exception:  # a class the worker could not import: the message survives
            spec = ExcSpec(RuntimeError, (str(exc),), {})
        return ("raise", spec)

    # --- answering the worker ------------------------------------------------------------------
    def handle(self, message: dict) -> None:
        op = message.get("op")
        if op == "cb":
            try:
                outcome = ("value", self.export(self.callback(message)))
            except Exception as exc:  # a tool's failure (on purpose) or a refused question
                outcome = self.exception(exc)
            self.send(("ret", message["seq"], outcome))
        elif op == "await":
            self.start_await(message["task"], self.objects.get(message["target"]))
        elif op == "cancel_await":
            task = self.tasks.pop(message["task"], None)
            if task is not None:
                task.cancel()
        elif op == "sleep" and self.clock is not None:
            self.clock.remote_sleep(message["sid"], float(message["seconds"]))
        elif op == "cancel" and self.clock is not None:
            self.clock.remote_cancel(message["sid"])

    def callback(self, message: dict) -> Any:
        kind = message["kind"]
        clock = self.clock if self.clock is not None else SimulatedClock()
        if kind == "now":
            return clock.now()
        if kind == "advance":
            return clock.advance(float(message["seconds"]))
        if kind == "sleeps":
            return list(clock.sleeps)
        obj = self.objects.get(message.get("target"))
        if kind == "call":
            if not callable(obj):
                raise TypeError(f"{type(obj).__name__} 不能调用")
            return obj(*self.take(message["args"]), **self.take(message["kwargs"]))
        if kind == "getattr":
            name = str(message["name"])
            if name.startswith("_") and name not in PUBLIC_DUNDERS:
                raise AttributeError(f"检查器的对象不让读 {name}")
            return getattr(obj, name)
        if kind == "list":
            return list(obj)
        if kind == "len":
            return len(obj)
        if kind == "getitem":
            return obj[self.take(message["key"])]
        if kind == "contains":
            return self.take(message["item"]) in obj
        if kind == "bool":
            return bool(obj)
        if kind == "str":
            return str(obj)
        if kind == "repr":
            return repr(obj)
        raise ValueError(f"unknown callback {kind!r}")

    def start_await(self, task_id: int, awaitable: Any) -> None:
        """The worker awaits a referee awaitable (a tool's coroutine): run it here, answer "done" when it ends."""
        def done(future: asyncio.Future) -> None:
            self.tasks.pop(task_id, None)
            if future.cancelled():
                return
            exc = future.exception()
            outcome = self.exception(exc) if exc is not None else ("value", self.export(future.result()))
            try:
                self.send(("done", task_id, outcome))
            except (Hang, Crashed):
                pass

        if self.loop is None or not inspect.isawaitable(awaitable):
            spec = ExcSpec(RuntimeError, ("检查器：这里不能 await 工具（检查已经结束）",), {})
            self.send(("done", task_id, ("raise", spec)))
            return
        task = asyncio.ensure_future(awaitable, loop=self.loop)
        self.tasks[task_id] = task
        task.add_done_callback(done)

    def finish(self, message: dict, args: tuple, kwargs: dict) -> Any:
        """The answer to an invoke: what it did to its arguments, its prints and waits, its value."""
        for given, after in zip(args, message.get("args", [])):
            _restore(given, self.take(after))
        for key, after in message.get("kwargs", {}).items():
            _restore(kwargs.get(key), self.take(after))
        self.printed += message.get("printed", "")
        self.sleeps += message.get("sleeps", [])
        if "raised" in message:
            raised = message["raised"]
            raise Raised(raised["names"], raised["message"], message.get("printed", ""))
        return self.take(message["value"])

    def close_coroutines(self) -> None:
        for coroutine in self.coroutines:
            if inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
                coroutine.close()  # asked for and never awaited: no "never awaited" warning
        self.coroutines = []


def _restore(given: Any, after: Any) -> None:
    """Copy back what the worker's call did to a list or dict argument (the referee's object, in place)."""
    if type(given) is list and type(after) is list:
        given[:] = after
    elif type(given) is dict and type(after) is dict:
        given.clear()
        given.update(after)


def _value_dataclass(value: Any) -> bool:
    """A dataclass of the toolkit (a ToolResult, an Attempt) whose fields are plain data (or the toolkit's enums,
    or more such dataclasses): a value, safe to copy to the worker (the referee's records are not in it)."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return False
    if not type(value).__module__.startswith("toolkit."):
        return False
    return all(_plain_tree(getattr(value, f.name)) for f in dataclasses.fields(value))


def _plain_tree(value: Any, depth: int = 0) -> bool:
    t = type(value)
    if value is None or t in (bool, int, float, str):
        return True
    if depth > 30:
        return False
    if t in (list, tuple):
        return all(_plain_tree(v, depth + 1) for v in value)
    if t is dict:
        return all(_plain_tree(k, depth + 1) and _plain_tree(v, depth + 1) for k, v in value.items())
    if isinstance(value, enum.Enum):
        return t.__module__.startswith("toolkit.")  # ErrorCode: a value, like the string it is
    return _value_dataclass(value)
