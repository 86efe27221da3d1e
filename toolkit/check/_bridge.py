"""The referee's side of a scenario run: the tools, the model, the clock and their records stay here (see _remote.py).

The student's object is a `WorkerRef` (a Foreign that can be asked things): calling it inside `simulate` is a
`RemoteCall`, which answers the worker's asks (_session.py) until the call returns. What a probe hands the object
is an `Offer` (a scripted tool, the model, an executor's tools), of which the worker gets a description. The clock
is a `BridgeClock`: the worker's sleeps are waiters on it, so the referee records every wait and ends each one.
Values from the worker reach a check only as plain data (`sanitize`).
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from typing import Any

from ..clock import SimulatedClock, get_clock
from ._errors import CheckerError
from ._plain import Foreign, decode, foreign_fields

_CLOCKS = itertools.count(1)


class BridgeClock(SimulatedClock):
    """A SimulatedClock whose waiters may be the worker's sleeps; while a call is out, the pump moves it."""

    def __init__(self, start: float = 0.0, seed: int | None = 0) -> None:
        super().__init__(start, seed)
        self.seed = seed
        self.key = next(_CLOCKS)  # the worker keeps one stand-in per clock: its random stream goes on across calls
        self.pumping = 0
        self.remote: dict[int, asyncio.Future] = {}

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self.pumping:
            super()._schedule(loop)

    def _advance_when_idle(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.pumping:  # scheduled before the call went out: the pump decides now
            self._advancer_scheduled = False
            return
        super()._advance_when_idle(loop)

    def remote_sleep(self, sid: int, seconds: float, waiter: asyncio.Future) -> None:
        """The worker's sleep `sid` as a waiter here (a future whose callback tells the worker)."""
        self.sleeps.append(seconds)
        if not math.isinf(seconds):  # a hang is never woken, as on a SimulatedClock
            self.remote[sid] = waiter
            heapq.heappush(self._waiters, (self._now + seconds, next(self._seq), waiter))

    def remote_cancel(self, sid: int) -> None:
        waiter = self.remote.pop(sid, None)
        if waiter is not None:
            waiter.cancel()

    def step(self) -> bool:
        """Move to the next wake-up and wake everyone due then; False when nobody waits."""
        return self._wake_earliest()


class Offer:
    """Something of the referee's a probe hands the student's object (a scripted tool, the model): the worker gets
    `spec(session)`, a description to build a stand-in from, never the object (_session.Session.export)."""

    def spec(self, session: Any) -> Any:
        raise NotImplementedError


class WorkerRef(Foreign):
    """An object in the worker, seen from the referee: a Foreign (plain to compare: equal only to itself)
    that can also be asked for an attribute or its items, and, if callable, called."""

    __slots__ = ("session", "id")

    def __init__(self, session: Any, id: int, shown: Foreign) -> None:
        super().__init__(shown.type_name, shown.kind, shown.text, shown.shown, shown.truthy)
        self.session, self.id = session, id

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.session.op(self.id, "getattr", name)

    def __iter__(self) -> Any:
        return iter(self.session.op(self.id, "list", None))

    def plain(self) -> Foreign:
        return Foreign(self.type_name, self.kind, self.text, self.shown, self.truthy)


class CallableWorkerRef(WorkerRef):
    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> "RemoteCall":
        return RemoteCall(self.session, self.id, args, kwargs)  # awaited by the probe, inside simulate()


async def _settle(loop: asyncio.AbstractEventLoop) -> None:
    """Let every referee task that can run, run (a tool's coroutine the worker awaits)."""
    for _ in range(100_000):
        await asyncio.sleep(0)
        if not getattr(loop, "_ready", None):
            return


class RemoteCall:
    """obj(*args, **kwargs) in the worker, awaited: the referee answers the worker until it returns."""

    def __init__(self, session: Any, target: int, args: tuple, kwargs: dict) -> None:
        self.session, self.target, self.args, self.kwargs = session, target, args, kwargs

    def __await__(self) -> Any:
        return self.run().__await__()

    async def run(self) -> Any:
        s = self.session
        clock = get_clock()
        if not isinstance(clock, BridgeClock):
            raise CheckerError("a remote call needs simulate()'s clock (toolkit.check._core.simulate)")
        loop = asyncio.get_running_loop()
        n = next(s.ids)
        s.send(("invoke", n, self.target, s.export(list(self.args)), s.export(dict(self.kwargs)),
                (clock.key, clock.seed)))
        outer, s.clock, s.loop = s.clock, clock, loop
        clock.pumping += 1
        try:
            while True:
                await _settle(loop)
                if s.poll(0):
                    message = s.receive()
                    if message.get("op") == "result" and message["n"] == n:
                        return s.finish(message, self.args, self.kwargs)
                    s.handle(message)
                    continue
                if s.idle and clock.step():  # the worker's sleeps it woke are answered "done" (_settle)
                    continue
                s.receive_later()
        finally:
            clock.pumping -= 1
            s.clock, s.loop = outer, None
            s.close_coroutines()
            if clock._waiters and not clock.pumping:
                clock._schedule(loop)


def sanitize(value: Any) -> Any:
    """A probe's record as a check may read it: plain data, and a Foreign for anything else."""
    t = type(value)
    if value is None or t in (bool, int, float, str):
        return value
    if isinstance(value, WorkerRef):
        return value.plain()
    if isinstance(value, Foreign):
        return value
    if t in (list, tuple):
        return t(sanitize(v) for v in value)
    if t is dict:
        return {sanitize(k): sanitize(v) for k, v in value.items()}
    return decode({"o": foreign_fields(value)})
