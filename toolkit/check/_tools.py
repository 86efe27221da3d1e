"""Scripted tools for probes (referee side): they count their calls and fail by a plan, on the simulated clock."""
from __future__ import annotations

from typing import Any

from ..clock import get_clock
from ..results import RetryableToolError
from ._bridge import Offer
from ._core import play, probe, simulate
from ._remote import Spec


class Scripted(Offer):
    """An async tool that follows `plan` (one entry per call, the last repeats): "ok", "timeout",
    "permission", "value", "rate_limited" (Retry-After `retry_after`), "connection", or a value to return.

    Each call first takes `latency` simulated seconds. `calls` counts calls that ran, `times` records
    when; `requested` also counts the coroutines asked for, so `not_awaited()` tells a call made but
    never awaited (`tool_fn(x)` without `await`) from no call at all.
    """

    sync = False

    def __init__(self, plan: list[Any], *, latency: float = 0.0, retry_after: float = 5.0,
                 result: Any = "结果", name: str = "search") -> None:
        self.plan, self.latency, self.retry_after, self.result = list(plan), latency, retry_after, result
        self.calls = 0
        self.requested = 0
        self.times: list[float] = []
        self.args: list[tuple] = []
        self.__name__ = name

    def _next(self) -> Any:
        step = self.plan[min(self.calls, len(self.plan) - 1)]
        self.calls += 1
        return step

    def _outcome(self, step: Any) -> Any:
        if step == "ok":
            return self.result
        if step == "timeout":
            raise TimeoutError("工具超时")
        if step == "connection":
            raise ConnectionError("连接被重置")
        if step == "permission":
            raise PermissionError("没有权限读取该文件")
        if step == "value":
            raise ValueError("参数 city 不能为空")
        if step == "rate_limited":
            raise RetryableToolError("请求过于频繁", error_code="RATE_LIMITED", retry_after=self.retry_after)
        return step

    def spec(self, session: Any) -> Spec:
        """What the worker builds its stand-in from: a function named like the tool; each call is asked here."""
        return Spec("tool", (session.offer(self, "tool", self, self.sync), self.__name__, self.sync))

    def not_awaited(self) -> int:
        return self.requested - self.calls

    def record(self) -> dict:
        """What happened to this tool, as plain data."""
        return {"calls": self.calls, "not_awaited": self.not_awaited(), "times": self.times,
                "args": [[list(a), k] for a, k in self.args]}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.requested += 1
        return self._run(args, kwargs)

    async def _run(self, args: tuple, kwargs: dict) -> Any:
        clock = get_clock()
        self.times.append(clock.now())
        self.args.append((args, kwargs))
        step = self._next()
        if self.latency:
            await clock.sleep(self.latency)
        return self._outcome(step)


class ScriptedSync(Scripted):
    """The same, as a plain (sync) function."""

    sync = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.requested += 1
        self.times.append(get_clock().now())
        self.args.append((args, kwargs))
        return self._outcome(self._next())


@probe
def retry_run(fn: Any, *, plan: list[Any], args: tuple = (), kwargs: dict | None = None, seed: int = 0,
              sync: bool = False, **tool: Any) -> dict:
    """Probe: call fn(tool, *args, **kwargs) on a fresh simulated clock, with a tool scripted by `plan`.

    Returns the value fn returned, the tool's record (calls, not_awaited, times, args) and the clock's
    waits and final time.
    """
    scripted = (ScriptedSync if sync else Scripted)(plan, **tool)

    async def go(clock: Any) -> Any:
        return await play(fn, scripted, *args, **(kwargs or {}))

    value, clock = simulate(go, seed)
    return {"value": value, **scripted.record(), "waits": clock.sleeps, "now": clock.now()}


@probe
def budget_run(fn: Any, *, plans: list[list[Any]], budget: dict, kwargs: dict | None = None, seed: int = 0,
               **tool: Any) -> dict:
    """Probe: call fn(tool, budget=shared, **kwargs) once per plan, one call after another on one simulated
    clock; each call gets a fresh tool scripted by its plan, and all of them share one budget dict.

    Returns each call's value and its tool's record, the clock's waits and final time, and the budget's
    tokens and capacity afterwards.
    """
    shared = dict(budget)
    tools = [Scripted(plan, **tool) for plan in plans]

    async def go(clock: Any) -> list[Any]:
        return [await play(fn, scripted, budget=shared, **(kwargs or {})) for scripted in tools]

    values, clock = simulate(go, seed)
    return {"values": values, "records": [t.record() for t in tools], "waits": clock.sleeps, "now": clock.now(),
            "tokens": shared.get("tokens"), "capacity": shared.get("capacity")}
