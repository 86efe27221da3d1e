"""The worker's end of a scenario run: stand-ins for the referee's tools, model and clock, and the handles it keeps.

What a probe (run in the referee, see _core.py) hands the student's object arrives as a `Spec` (a tool, a model
client, an executor over such tools) and a stand-in is built from it here; each use of one is a message of
ARCHITECTURE.md's table, answered with plain data by the referee, which keeps the tools, the model, the clock and
their records: nothing of the referee's is here, nor a reference to one. Simulated time moves only when both sides
are idle (the worker says "idle" about every message it was sent). The worker's own state is the student's to
tamper with; whatever it sends is checked there and judged as such.
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
from typing import Any, Callable, NamedTuple

from ._plain import encode, exception_data, foreign_fields

__all__ = ["Link", "Spec", "ExcSpec"]


class Spec(NamedTuple):
    """In a referee message: what to build a stand-in from. ("tool", (k, name, sync)), ("client", (k,)),
    ("executor", (max_retries, [(tool Spec, description, parameters, kind), ...]))."""

    kind: str
    args: tuple


class ExcSpec(NamedTuple):
    """In a referee message: an exception to raise in the worker (a tool's failure), of plain data."""

    cls: type
    args: tuple
    fields: dict

    def build(self) -> BaseException:
        exc = self.cls.__new__(self.cls, *self.args)
        exc.args = self.args
        exc.__dict__.update(self.fields)
        return exc


class Reply:
    """A model's reply as the openai SDK shows it: attributes, and model_dump(exclude_none=True)."""

    def __init__(self, fields: dict) -> None:
        self.__dict__.update({k: _reply(v) for k, v in fields.items()})

    def model_dump(self, exclude_none: bool = False, **_: Any) -> dict:
        def dump(value: Any) -> Any:
            if isinstance(value, Reply):
                return value.model_dump(exclude_none)
            return [dump(v) for v in value] if isinstance(value, list) else value
        return {k: dump(v) for k, v in self.__dict__.items() if not (exclude_none and v is None)}


def _reply(value: Any) -> Any:
    if isinstance(value, dict):
        return Reply(value)
    return [_reply(v) for v in value] if isinstance(value, list) else value


def _client(link: "Link", k: int) -> Reply:
    """A client as the openai SDK's: client.chat.completions.create(**request) asks the referee's model."""
    def create(**request: Any) -> Any:
        request = json.loads(json.dumps(request, ensure_ascii=False, default=lambda value: value.model_dump(
            exclude_none=True) if hasattr(value, "model_dump") else str(value)))
        return _reply(link.ask("model", client=k, request=request))

    return _reply({"chat": {"completions": {"create": create}}})


def _tool(link: "Link", k: int, name: str, sync: bool) -> Callable:
    """A referee tool as a function here: a sync one answers at once, an async one returns what to await."""
    def tool(*args: Any, **kwargs: Any) -> Any:
        fields = {"tool": k, "args": encode(list(args)), "kwargs": encode(kwargs)}
        if sync:
            return link.ask("tool", **fields)
        return link.wait(link.ask_later("tool", **fields), "await")

    tool.__name__ = tool.__qualname__ = name
    return tool


def _executor(link: "Link", max_retries: int, tools: list) -> Any:
    from ..executor import ToolExecutor
    from ..registry import Tool, ToolRegistry

    registry = ToolRegistry(Tool(spec.args[1], link.take(spec), *about) for spec, *about in tools)  # about: see Spec
    return ToolExecutor(registry=registry, max_retries=max_retries)


class StandInClock:
    """get_clock() in the worker during a scenario: the referee's simulated clock, asked over the pipe. Its `random`
    is seeded as the referee's clock is: the same seed gives the same jitter, as on a SimulatedClock."""

    def __init__(self, link: "Link", seed: int | None) -> None:
        self._link = link
        self.random = random.Random(seed)

    def now(self) -> float:
        return self._link.ask("now")

    async def sleep(self, seconds: float) -> None:
        from ..clock import sleep_seconds

        seconds = sleep_seconds(seconds)  # NaN raises here, as it does on a SimulatedClock
        await self._link.wait(next(self._link.counter), "sleep", seconds=seconds)

    def __repr__(self) -> str:
        return "SimulatedClock(检查器的模拟时钟)"


class Link:
    """The worker's end of the pipe: one reader thread, the handles, the stand-ins and the pending waits."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.deferred: list = []
        self.handles: dict[int, Any] = {}
        self.stand_ins: dict[int, Any] = {}
        self.clocks: dict[int, StandInClock] = {}
        self.waiting: dict[int, asyncio.Future] = {}
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
            except Exception:  # the referee is gone (EOFError, OSError) or sent what cannot be read here
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
            data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a string: escaped, it crosses as it is
            data = json.dumps(message).encode("ascii")
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
        """A value that is not plain data, in an answer: a handle the referee may ask about."""
        n = next(self.counter)
        self.handles[n] = value
        return {"r": [n, callable(value), foreign_fields(value)]}

    def out(self, value: Any) -> Any:
        return encode(value, self.keep)

    def take(self, value: Any) -> Any:
        """A value from the referee, with its stand-ins and exceptions made."""
        t = type(value)
        if t is Spec:
            if value.kind == "executor":
                return _executor(self, *value.args)
            k = value.args[0]
            if k not in self.stand_ins:
                self.stand_ins[k] = _tool(self, *value.args) if value.kind == "tool" else _client(self, k)
            return self.stand_ins[k]
        if t is ExcSpec:
            return value.build()
        if t in (list, tuple):
            return t(self.take(v) for v in value)
        if t is dict:
            return {self.take(k): self.take(v) for k, v in value.items()}
        return value

    def outcome(self, outcome: tuple) -> Any:
        kind, value = outcome
        value = self.take(value)
        if kind == "raise":
            raise value
        return value

    # --- asking the referee ---------------------------------------------------------------------
    def ask_later(self, op: str, **fields: Any) -> int:
        n = next(self.counter)
        self.send({"op": op, "id": n, **fields})
        return n

    def ask(self, op: str, **fields: Any) -> Any:
        """Ask and wait for the answer (a sync tool, the model, the time); the referee's questions are answered
        meanwhile, and what else arrives is handled once this returns."""
        n = self.ask_later(op, **fields)
        while True:
            message = self.next_message()
            if message is None:
                os._exit(3)
            if message[0] == "done" and message[1] == n:
                if self.deferred and self.loop is not None:
                    self.loop.call_soon(self.drain)
                return self.outcome(message[2])
            if message[0] == "op":
                self.op(*message[1:])
            else:
                self.processed -= 1
                self.deferred.append(message)

    async def wait(self, n: int, op: str, **fields: Any) -> Any:
        """In the scenario's loop: tell the referee (a sleep, the await of a tool's call) and wait for its "done"."""
        future = asyncio.get_running_loop().create_future()
        self.waiting[n] = future
        self.send({"op": op, "id": n, **fields})
        self.idle_soon()
        answered = False
        try:
            outcome = await future
            answered = True
        finally:
            self.waiting.pop(n, None)
            if not answered:  # cancelled here (a timeout won): the referee drops it too
                future.cancel()
                self.send({"op": "cancel", "id": n})
        return self.outcome(outcome)

    def drain(self) -> None:
        """In the scenario's loop: handle what the referee sent (wake-ups, answers, questions)."""
        while self.deferred or not self.inbox.empty():
            if self.deferred:
                message = self.deferred.pop(0)
                self.processed += 1
            else:
                message = self.next_message()
            if message is None:
                os._exit(3)
            if message[0] == "done":
                future = self.waiting.get(message[1])
                if future is not None and not future.done():
                    future.set_result(message[2])
            elif message[0] == "op":
                self.op(*message[1:])
        self.idle_soon()

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
        if self.dirty and self.waiting:
            self.dirty = False
            data = json.dumps({"op": "idle", "seen": self.processed}).encode("utf-8")
            with self.send_lock:
                self.conn.send_bytes(data)

    # --- the referee's requests ----------------------------------------------------------------
    def op(self, seq: int, target: int, kind: str, payload: Any) -> None:
        """A question about one of the worker's handles (runs the student's code: getattr, or its items)."""
        obj = self.handles.get(target)
        try:
            value = getattr(obj, payload) if kind == "getattr" else list(obj)
            answer = {"op": "ret", "seq": seq, "value": self.out(value)}
        except BaseException as exc:
            answer = {"op": "ret", "seq": seq, "raised": exception_data(exc)}
        self.send(answer)

    def invoke(self, n: int, target: int, args: list, kwargs: dict, clock: tuple,
               report: Callable[[], dict]) -> None:
        """Run handles[target](*args, **kwargs) on the stand-in clock, awaited if awaitable; answer "result"."""
        from ..clock import use_clock
        obj = self.handles.get(target)
        args, kwargs = self.take(args), self.take(kwargs)
        key, seed = clock
        if key not in self.clocks:  # one per referee clock: its random stream goes on across calls
            self.clocks[key] = StandInClock(self, seed)

        async def body() -> Any:
            with use_clock(self.clocks[key]):
                value = obj(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
                return value

        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        loop = self.loop = self._loop
        answer: dict = {"op": "result", "n": n}
        try:
            answer["value"] = self.out(loop.run_until_complete(body()))
        except BaseException as exc:  # the student's: it becomes a Raised in the referee
            answer["raised"] = exception_data(exc)
        finally:
            self.loop = None
            for future in list(self.waiting.values()):
                future.cancel()
        # what the call did to its arguments (a budget dict it spends from, a list it should not edit)
        answer["args"] = [self.out(a) if type(a) in (list, dict) else None for a in args]
        answer["kwargs"] = {k: self.out(v) for k, v in kwargs.items() if type(v) in (list, dict)}
        answer.update(report())
        self.send(answer)
