"""The worker's side of a scenario run: the student's code calls tools and a clock that live in the referee.

A scenario check (a probe, see _core.py) runs in the referee. It hands the student's object scripted
tools, a simulated clock and whatever else the scenario needs; they stay in the referee, and the
worker gets proxies. A call through a proxy crosses the pipe as plain data and is answered there, so
the referee itself counts the calls, keeps their arguments and records the waits: nothing the student's
process computes is taken as a record.

    referee -> worker  (pickled: the referee is trusted)
        ("invoke", n, target, args, kwargs, clock)  run handles[target](*args, **kwargs), awaited if awaitable
        ("op", seq, target, kind, payload)          getattr / list / len / getitem / contains on a handle
        ("ret", seq, outcome)                       the answer to one of the worker's callbacks
        ("done", task, outcome)                     a referee awaitable the worker awaited has finished
        ("wake", [sid, ...])                        simulated sleeps that are over
    worker -> referee  (JSON, see _plain.py: {"r": [...]} a handle in the worker, {"p": id} a referee object)
        {"op": "cb", "seq", "kind", ...}            call / getattr / list / len / getitem / contains / bool /
                                                    str / repr on a referee object; now / advance / sleeps
        {"op": "await", "task", "target"}           await a referee awaitable (a tool's coroutine)
        {"op": "sleep", "sid", "seconds"}           get_clock().sleep(seconds) on the referee's clock
        {"op": "cancel", "sid"}                     that sleep was cancelled (a timeout won the race)
        {"op": "cancel_await", "task"}              that await was cancelled
        {"op": "idle", "seen"}                      nothing can run here until the referee answers
        {"op": "result", "n", ...} / {"op": "ret", "seq", ...}

Simulated time moves only when both sides are idle, as SimulatedClock does in one loop: the referee
advances its clock to the next wake-up after the worker said "idle" about every message it was sent.
The worker's own state (its proxies, its loop) is the student's to tamper with; whatever it sends is
then just another call, sleep or answer, judged as such.
"""
from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import os
import queue
import random
import threading
from typing import Any, Callable

from ._plain import encode, exception_data, foreign_fields

__all__ = ["Link", "ArgRef", "ObjRef", "ExcSpec"]


class ArgRef:
    """In a referee message: one of the worker's own handles."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id


class ObjRef:
    """In a referee message: an object that stays in the referee (callable, awaitable: how to proxy it)."""

    __slots__ = ("id", "callable", "awaitable")

    def __init__(self, id: int, callable: bool, awaitable: bool) -> None:
        self.id, self.callable, self.awaitable = id, callable, awaitable


class ExcSpec:
    """In a referee message: an exception to raise in the worker (a tool's failure)."""

    __slots__ = ("cls", "args", "fields")

    def __init__(self, cls: type, args: tuple, fields: dict) -> None:
        self.cls, self.args, self.fields = cls, args, fields

    def build(self) -> BaseException:
        exc = self.cls.__new__(self.cls, *self.args)
        exc.args = self.args
        exc.__dict__.update(self.fields)
        return exc


class Remote:
    """A referee object as the student's code sees it: every use is one question over the pipe."""

    __slots__ = ("_link", "_id", "__weakref__")

    def __init__(self, link: "Link", id: int) -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_id", id)

    def _ask(self, kind: str, **fields: Any) -> Any:
        return object.__getattribute__(self, "_link").callback(kind, target=object.__getattribute__(self, "_id"),
                                                               **fields)

    def __getattr__(self, name: str) -> Any:
        return self._ask("getattr", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"检查器的对象是只读的（不能设置 {name}）")

    def __iter__(self) -> Any:
        return iter(self._ask("list"))

    def __len__(self) -> int:
        return self._ask("len")

    def __getitem__(self, key: Any) -> Any:
        return self._ask("getitem", key=object.__getattribute__(self, "_link").out(key))

    def __contains__(self, item: Any) -> bool:
        return self._ask("contains", item=object.__getattribute__(self, "_link").out(item))

    def __bool__(self) -> bool:
        return self._ask("bool")

    def __str__(self) -> str:
        return self._ask("str")

    def __repr__(self) -> str:
        return self._ask("repr")


class RemoteFunction(Remote):
    """A callable referee object (a scripted tool, a client's method)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        link = object.__getattribute__(self, "_link")
        return self._ask("call", args=link.out(list(args)), kwargs=link.out(kwargs))


class ProxyClock:
    """get_clock() in the worker during a scenario: the referee's simulated clock, over the pipe."""

    def __init__(self, link: "Link", seed: int | None) -> None:
        self._link = link
        self.random = random.Random(seed)  # the referee's clock's seed: the same jitter a SimulatedClock gives

    def now(self) -> float:
        return self._link.callback("now")

    def advance(self, seconds: float) -> None:
        self._link.callback("advance", seconds=float(seconds))

    @property
    def sleeps(self) -> list:
        return self._link.callback("sleeps")

    async def sleep(self, seconds: float) -> None:
        from ..clock import sleep_seconds

        seconds = sleep_seconds(seconds)  # NaN raises here, as it does on a SimulatedClock
        link = self._link
        sid = next(link.counter)
        future = asyncio.get_running_loop().create_future()
        link.sleepers[sid] = future
        link.send({"op": "sleep", "sid": sid, "seconds": seconds})
        link.idle_soon()
        woken = False
        try:
            await future
            woken = True
        finally:
            link.sleepers.pop(sid, None)
            if not woken:  # cancelled (a timeout's timer when the call won): the referee's waiter goes too
                future.cancel()
                link.send({"op": "cancel", "sid": sid})

    def __repr__(self) -> str:
        return "SimulatedClock(检查器的模拟时钟)"


class Link:
    """The worker's end of the pipe: one reader thread, the handles, the proxies and the pending waits."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.deferred: list = []
        self.handles: dict[int, Any] = {}
        self.proxies: dict[int, Remote] = {}
        self.clocks: dict[int, ProxyClock] = {}
        self.sleepers: dict[int, asyncio.Future] = {}
        self.awaits: dict[int, asyncio.Future] = {}
        self.counter = itertools.count(1)
        self.processed = 0
        self.dirty = True
        self.loop: asyncio.AbstractEventLoop | None = None  # the scenario's loop while an invoke runs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle_scheduled = False
        self.send_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True, name="referee-link").start()

    # --- the pipe -------------------------------------------------------------------------------
    def _read(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                message = None
            except Exception:  # a message that cannot be unpickled here: the referee gone wrong
                message = None
            self.inbox.put(message)
            loop = self.loop
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(self.drain)
                except RuntimeError:  # that loop has just closed
                    pass
            if message is None:
                return

    def send(self, message: dict) -> None:
        try:
            data = json.dumps(message, ensure_ascii=False, allow_nan=True).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a string: escaped, it crosses as it is
            data = json.dumps(message, allow_nan=True).encode("ascii")
        with self.send_lock:
            self.conn.send_bytes(data)
        self.dirty = True

    def next_message(self) -> Any:
        """The next message for the main thread (None: the referee is gone)."""
        message = self.inbox.get()
        if message is not None:
            self.processed += 1
            self.dirty = True
        return message

    # --- values both ways ---------------------------------------------------------------------
    def keep(self, value: Any) -> dict:
        """A value that is not plain data, in an answer: a referee object stays itself, anything else a handle."""
        if isinstance(value, Remote):
            return {"p": object.__getattribute__(value, "_id")}
        n = next(self.counter)
        self.handles[n] = value
        return {"r": [n, callable(value), foreign_fields(value)]}

    def out(self, value: Any) -> Any:
        return encode(value, self.keep)

    def take(self, value: Any) -> Any:
        """A value from the referee, with its references made into handles and proxies."""
        t = type(value)
        if t is ArgRef:
            return self.handles.get(value.id)
        if t is ObjRef:
            if value.awaitable:
                return self._awaited(value.id)
            proxy = self.proxies.get(value.id)
            if proxy is None:
                proxy = (RemoteFunction if value.callable else Remote)(self, value.id)
                self.proxies[value.id] = proxy
            return proxy
        if t is ExcSpec:
            return value.build()
        if t is list:
            return [self.take(v) for v in value]
        if t is tuple:
            return tuple(self.take(v) for v in value)
        if t is dict:
            return {self.take(k): self.take(v) for k, v in value.items()}
        return value

    def outcome(self, outcome: tuple) -> Any:
        kind, value = outcome
        value = self.take(value)
        if kind == "raise":
            raise value
        return value

    # --- waiting on the referee ---------------------------------------------------------------
    def callback(self, kind: str, **fields: Any) -> Any:
        """Ask the referee and wait for its answer; its own questions are answered meanwhile."""
        seq = next(self.counter)
        self.send({"op": "cb", "seq": seq, "kind": kind, **fields})
        while True:
            message = self.next_message()
            if message is None:
                os._exit(3)
            if message[0] == "ret" and message[1] == seq:
                if self.deferred and self.loop is not None:
                    self.loop.call_soon(self.drain)
                return self.outcome(message[2])
            if message[0] == "op":
                self.op(*message[1:])
            else:  # a wake-up or a finished await: handled once this callback has returned
                self.processed -= 1
                self.deferred.append(message)

    async def _awaited(self, id: int) -> Any:
        task = next(self.counter)
        future = asyncio.get_running_loop().create_future()
        self.awaits[task] = future
        self.send({"op": "await", "task": task, "target": id})
        self.idle_soon()
        answered = False
        try:
            outcome = await future
            answered = True
        finally:
            self.awaits.pop(task, None)
            if not answered:  # cancelled here (a timeout won): the tool's run in the referee is cancelled too
                future.cancel()
                self.send({"op": "cancel_await", "task": task})
        return self.outcome(outcome)

    def drain(self) -> None:
        """In the scenario's loop: handle what the referee sent (wake-ups, finished awaits, questions)."""
        while self.deferred or not self.inbox.empty():
            if self.deferred:
                message = self.deferred.pop(0)
                self.processed += 1
            else:
                message = self.next_message()
            if message is None:
                os._exit(3)
            self.dispatch(message)
        self.idle_soon()

    def dispatch(self, message: tuple) -> None:
        kind = message[0]
        if kind == "done":
            future = self.awaits.get(message[1])
            if future is not None and not future.done():
                future.set_result(message[2])
        elif kind == "wake":
            for sid in message[1]:
                future = self.sleepers.get(sid)
                if future is not None and not future.done():
                    future.set_result(None)
        elif kind == "op":
            self.op(*message[1:])

    def idle_soon(self) -> None:
        loop = self.loop
        if loop is not None and not self._idle_scheduled:
            self._idle_scheduled = True
            loop.call_soon(self._idle_check)

    def _idle_check(self) -> None:
        self._idle_scheduled = False
        if getattr(self.loop, "_ready", None):  # something here can still run: look again after it
            self.idle_soon()
            return
        if self.deferred or not self.inbox.empty():
            self.drain()
            return
        if self.dirty and (self.sleepers or self.awaits):
            self.dirty = False
            data = json.dumps({"op": "idle", "seen": self.processed}).encode("utf-8")
            with self.send_lock:
                self.conn.send_bytes(data)

    # --- the referee's requests ----------------------------------------------------------------
    def op(self, seq: int, target: int, kind: str, payload: Any) -> None:
        """A question about one of the worker's handles (runs the student's code: getattr, iteration...)."""
        obj = self.handles.get(target)
        try:
            if kind == "getattr":
                value = getattr(obj, payload)
            elif kind == "list":
                value = list(obj)
            elif kind == "len":
                value = len(obj)
            elif kind == "getitem":
                value = obj[self.take(payload)]
            elif kind == "contains":
                value = self.take(payload) in obj
            elif kind == "release":
                for n in payload:
                    self.handles.pop(n, None)
                value = None
            else:
                raise ValueError(f"unknown op {kind!r}")
            answer = {"op": "ret", "seq": seq, "value": self.out(value)}
        except BaseException as exc:
            answer = {"op": "ret", "seq": seq, "raised": exception_data(exc)}
        self.send(answer)

    def invoke(self, n: int, target: int, args: list, kwargs: dict, clock: tuple,
               report: Callable[[], dict]) -> None:
        """Run handles[target](*args, **kwargs) under the proxy clock, awaited if awaitable; answer "result"."""
        from ..clock import use_clock
        obj = self.handles.get(target)
        args, kwargs = self.take(args), self.take(kwargs)

        key, seed = clock
        proxy = self.clocks.get(key)
        if proxy is None:
            proxy = self.clocks[key] = ProxyClock(self, seed)

        async def body() -> Any:
            with use_clock(proxy):
                value = obj(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
                return value

        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        loop = self.loop = self._loop
        answer: dict = {"op": "result", "n": n}
        try:
            value = loop.run_until_complete(body())
            answer["value"] = self.out(value)
        except BaseException as exc:  # the student's: it becomes a Raised in the referee
            answer["raised"] = exception_data(exc)
        finally:
            self.loop = None
            for future in list(self.sleepers.values()) + list(self.awaits.values()):
                future.cancel()
        # what the call did to its arguments (a budget dict it spends from, a list it should not edit)
        answer["args"] = [self.out(a) if type(a) in (list, dict) else None for a in args]
        answer["kwargs"] = {k: self.out(v) for k, v in kwargs.items() if type(v) in (list, dict)}
        answer.update(report())
        self.send(answer)
