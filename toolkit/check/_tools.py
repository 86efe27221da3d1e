"""Small scripted tools the checks call: they count their calls and fail by a plan, on the simulated clock."""
from __future__ import annotations

from typing import Any

from ..clock import get_clock
from ..results import RetryableToolError


class Scripted:
    """An async tool that follows `plan` (one entry per call, the last repeats): "ok", "timeout",
    "permission", "value", "rate_limited" (Retry-After `retry_after`), "connection", or a value to return.

    Each call first takes `latency` simulated seconds. `calls` counts calls, `times` records when.
    """

    def __init__(self, plan: list[Any], *, latency: float = 0.0, retry_after: float = 5.0,
                 result: Any = "结果", name: str = "search") -> None:
        self.plan, self.latency, self.retry_after, self.result = list(plan), latency, retry_after, result
        self.calls = 0
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
            raise RetryableToolError("请求过于频繁", code="RATE_LIMITED", retry_after=self.retry_after)
        return step

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        clock = get_clock()
        self.times.append(clock.now())
        self.args.append((args, kwargs))
        step = self._next()
        if self.latency:
            await clock.sleep(self.latency)
        return self._outcome(step)


class ScriptedSync(Scripted):
    """The same, as a plain (sync) function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.times.append(get_clock().now())
        self.args.append((args, kwargs))
        return self._outcome(self._next())


def pair(value: Any) -> tuple[Any, Any]:
    """The (result, error) pair a retry function must return, or a Chinese failure."""
    from ._core import Fail

    if not isinstance(value, tuple) or len(value) != 2:
        raise Fail(f"应该返回 (result, error) 二元组，你返回了 {type(value).__name__}: {str(value)[:60]}")
    return value
