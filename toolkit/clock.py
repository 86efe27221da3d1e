"""Time and chance for everything that waits: a real clock and a simulated one.

Every wait in the toolkit goes through the current clock (`get_clock()`).
One switch, `use_clock(SimulatedClock(seed=0))`, makes retries, latencies and
jitter simulated and seeded: waits are recorded, not slept, so a notebook runs
in milliseconds and prints the same numbers on every run.

The simulated clock is a small discrete-event scheduler that works inside any
asyncio loop (a Jupyter kernel's included): a sleeping task waits on a future,
and when nothing else in the loop is ready to run, the clock jumps to the
earliest wake-up time. Many concurrent sleepers therefore overlap as they
would in real time (50 calls of 0.1 s, 10 at a time, take 0.5 s).
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import random
import time
from contextlib import contextmanager
from typing import Iterator, Protocol

__all__ = ["Clock", "RealClock", "SimulatedClock", "get_clock", "set_clock", "use_clock"]


class Clock(Protocol):
    """What the toolkit needs from time: now, an awaitable sleep, and an rng."""

    random: random.Random

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


def _checked(seconds: float) -> float:
    """A wait in seconds, negatives as 0; ValueError for NaN (a NaN sleep never ends)."""
    seconds = float(seconds)
    if math.isnan(seconds):
        raise ValueError("cannot sleep NaN seconds; pass a number >= 0")
    return max(seconds, 0.0)


class RealClock:
    """Wall time (time.monotonic) and real asyncio sleeps."""

    def __init__(self, seed: int | None = None) -> None:
        self.random = random.Random(seed)

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(_checked(seconds))

    def __repr__(self) -> str:
        return "RealClock()"


class SimulatedClock:
    """Simulated time: sleeps return at once in real time, in order in simulated time.

    `sleeps` records every requested wait (seconds) in the order asked, for
    charts and tests. `random` is seeded, so jitter repeats exactly.
    `advance(seconds)` moves time by hand (outside any loop).
    """

    def __init__(self, start: float = 0.0, seed: int | None = 0) -> None:
        self._now = float(start)
        self.random = random.Random(seed)
        self.sleeps: list[float] = []
        self._waiters: list[tuple[float, int, asyncio.Future]] = []
        self._seq = itertools.count()
        self._advancer_scheduled = False

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move simulated time forward without sleeping (for synchronous code)."""
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"advance() needs seconds >= 0, got {seconds!r}")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        seconds = _checked(seconds)
        self.sleeps.append(seconds)
        if math.isinf(seconds):
            await asyncio.get_running_loop().create_future()  # a hang: only cancellation ends it
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        heapq.heappush(self._waiters, (self._now + seconds, next(self._seq), future))
        self._schedule(loop)
        try:
            await future
        finally:
            if not future.done():
                future.cancel()

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._advancer_scheduled:
            self._advancer_scheduled = True
            loop.call_soon(self._advance_when_idle, loop)

    def _advance_when_idle(self, loop: asyncio.AbstractEventLoop) -> None:
        self._advancer_scheduled = False
        while self._waiters and self._waiters[0][2].done():  # cancelled sleepers
            heapq.heappop(self._waiters)
        if not self._waiters:
            return
        # CPython's asyncio keeps runnable callbacks in loop._ready (stable since 3.4, no public API):
        # while anything else can still run, let it first. A loop without it (uvloop) just advances.
        if getattr(loop, "_ready", None):
            self._schedule(loop)
            return
        wake_at = self._waiters[0][0]
        self._now = max(self._now, wake_at)
        while self._waiters and self._waiters[0][0] <= wake_at:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
        if self._waiters:
            self._schedule(loop)

    def __repr__(self) -> str:
        return f"SimulatedClock(now={self._now:g}s, sleeps={len(self.sleeps)})"


_current: Clock = RealClock()


def get_clock() -> Clock:
    """The clock every wait in the toolkit uses unless one is passed explicitly."""
    return _current


def set_clock(clock: Clock | None) -> Clock:
    """Install `clock` for the whole process (None: back to real time); returns the old one."""
    global _current
    old, _current = _current, (clock if clock is not None else RealClock())
    return old


@contextmanager
def use_clock(clock: Clock | None = None) -> Iterator[Clock]:
    """`with use_clock(SimulatedClock(seed=0)) as clock:` simulate time inside the block."""
    clock = clock if clock is not None else SimulatedClock()
    old = set_clock(clock)
    try:
        yield clock
    finally:
        set_clock(old)
