"""Time and chance for everything that waits: a real clock and a simulated one.

Every wait in the toolkit goes through the current clock (`get_clock()`): the
executor, call_tool_with_retry, inject_faults' latency and the agent loop all
read it, none of them keeps a clock of its own. One switch,
`use_clock(SimulatedClock(seed=0))`, makes retries, latencies and jitter
simulated and seeded: waits are recorded, not slept, so a notebook runs in
milliseconds and prints the same numbers on every run.

The current clock is a context variable: `use_clock` sets it for the code
inside the block, including asyncio tasks started there, and never for other
threads' or tasks' code that did not start inside it, so concurrent notebooks
and tests keep their clocks apart. `set_clock` sets the process-wide default
that applies wherever no `use_clock` block is active.

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
from contextvars import ContextVar
from typing import Any, Iterator, Protocol

__all__ = ["Clock", "RealClock", "SimulatedClock", "get_clock", "set_clock", "use_clock", "sleep_seconds"]


class Clock(Protocol):
    """What the toolkit needs from time: now, an awaitable sleep, and an rng."""

    random: random.Random

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


def sleep_seconds(seconds: float) -> float:
    """A wait in seconds, negatives as 0; ValueError for NaN (a NaN sleep never ends)."""
    seconds = float(seconds)
    if math.isnan(seconds):
        raise ValueError("等待的秒数不能是 NaN（那样永远等不完）：请传一个不小于 0 的数")
    return max(seconds, 0.0)


class RealClock:
    """Wall time (time.monotonic) and real asyncio sleeps."""

    def __init__(self, seed: int | None = None) -> None:
        self.random = random.Random(seed)

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(sleep_seconds(seconds))

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
            raise ValueError(f"advance() 的秒数应是不小于 0 的数（模拟时间只能往前走），收到 {seconds!r}：请传一个不小于 0 的数")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        seconds = sleep_seconds(seconds)
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
        # Why read loop._ready: simulated time may only move when every task that can run has run
        # (the tasks released by the last wake-up may be about to start sleeps of their own; jumping
        # ahead before they do would wake the next sleeper too early and break the order a real
        # clock gives). asyncio has no public "is the loop idle?" call: call_soon FIFO order alone
        # cannot tell, since the callbacks we queue behind may queue more. CPython's loops (selector
        # and proactor, every version since 3.4) keep runnable callbacks in the deque loop._ready;
        # while it is non-empty we step aside and look again. A loop without it (uvloop) just
        # advances, which keeps single-task code right and may reorder wake-ups of concurrent ones.
        if getattr(loop, "_ready", None):
            self._schedule(loop)
            return
        self._wake_earliest()
        if self._waiters:
            self._schedule(loop)

    def _wake_earliest(self) -> bool:
        """Move to the earliest wake-up and wake every sleeper due then; False when nobody waits."""
        while self._waiters and self._waiters[0][2].done():  # cancelled sleepers
            heapq.heappop(self._waiters)
        if not self._waiters:
            return False
        wake_at = self._waiters[0][0]
        self._now = max(self._now, wake_at)
        while self._waiters and self._waiters[0][0] <= wake_at:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
        return True

    def __repr__(self) -> str:
        return f"SimulatedClock(now={self._now:g}s, sleeps={len(self.sleeps)})"


_default: Clock = RealClock()
_current: ContextVar[Clock | None] = ContextVar("toolkit_clock", default=None)


def get_clock() -> Clock:
    """The clock every wait in the toolkit uses: the innermost `use_clock`, else the default."""
    clock = _current.get()
    return clock if clock is not None else _default


def set_clock(clock: Clock | None) -> Clock:
    """Install `clock` as the process-wide default (None: back to real time); returns the old default.

    Code inside a `use_clock` block keeps that block's clock. Prefer `use_clock`:
    it is undone when the block ends and does not leak into other tests or threads.
    """
    global _default
    old, _default = _default, (_clock(clock) if clock is not None else RealClock())
    return old


def _clock(clock: Any) -> Clock:
    """`clock` when it has now() and sleep(); TypeError (in Chinese) for anything else."""
    if not (callable(getattr(clock, "now", None)) and callable(getattr(clock, "sleep", None))):
        raise TypeError(f"需要一个时钟（有 now() 和 sleep() 的对象），收到 {type(clock).__name__}："
                        "请传 SimulatedClock(seed=0) 或 RealClock()")
    return clock


@contextmanager
def use_clock(clock: Clock | None = None) -> Iterator[Clock]:
    """`with use_clock(SimulatedClock(seed=0)) as clock:` simulate time inside the block.

    The clock holds for the code in the block and the asyncio tasks it starts
    (they copy the context); the previous clock is back when the block ends,
    even if it raises. Threads started in the block do not see it unless they
    run in a copy of the context (`contextvars.copy_context().run`, as
    `asyncio.to_thread` does).
    """
    clock = _clock(clock) if clock is not None else SimulatedClock()
    previous = _current.get()
    token = _current.set(clock)
    try:
        yield clock
    finally:
        try:
            _current.reset(token)
        except ValueError:  # the block ended in another context than it began (a generator moved between tasks)
            _current.set(previous)
