"""Fault injection for teaching and tests: make any tool fail by a plan or by seeded rates.

`inject_faults(tool, plan=["timeout", "timeout", "ok"])` fails twice, then
works; `inject_faults(tool, rates={"rate_limit": 0.2}, seed=1)` fails 20% of
calls, the same calls on every run. Latency is slept on the current clock,
so with a SimulatedClock it costs no real time. Every call is recorded in
`.calls` for charts; `.plan` and `.rates` can be changed while it runs
(a widget panel does exactly that). `FAULTS` maps every fault name to its
Chinese label.
"""
from __future__ import annotations

import inspect
import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .clock import get_clock
from .results import PartialResult

__all__ = ["FAULTS", "FaultyTool", "inject_faults", "HTTPStatusError", "FaultCall"]


class HTTPStatusError(Exception):
    """A simulated HTTP error response: `status_code` and `headers`, like an HTTP client's."""

    def __init__(self, status_code: int, message: str = "", headers: dict | None = None) -> None:
        super().__init__(message or f"HTTP {status_code}")
        self.status_code = status_code
        self.headers = headers or {}


# fault name -> (Chinese label for panels and charts, what it does)
FAULTS: dict[str, str] = {
    "ok": "正常返回",
    "timeout": "超时",
    "hang": "卡死（只有单次超时能救）",
    "connection": "连接被重置",
    "rate_limit": "限流 429（带 Retry-After）",
    "server_error": "服务错误 500",
    "unavailable": "服务不可用 503",
    "auth": "认证失败 401",
    "permission": "权限不足",
    "bad_args": "参数错误",
    "partial": "只返回部分结果",
}


def _exception_for(fault: str, retry_after: float) -> BaseException:
    return {
        "timeout": TimeoutError("模拟故障：工具调用超时"),
        "connection": ConnectionResetError("模拟故障：连接被对端重置"),
        "rate_limit": HTTPStatusError(429, "模拟故障：请求过于频繁", {"retry-after": f"{retry_after:g}"}),
        "server_error": HTTPStatusError(500, "模拟故障：服务内部错误"),
        "unavailable": HTTPStatusError(503, "模拟故障：服务暂时不可用"),
        "auth": HTTPStatusError(401, "模拟故障：认证失败"),
        "permission": PermissionError("模拟故障：没有访问该资源的权限"),
        "bad_args": ValueError("模拟故障：参数不合法"),
    }[fault]


def _known(faults: Iterable[str]) -> None:
    """ValueError (in Chinese) naming the faults FAULTS does not know."""
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        raise ValueError(f"不认识的故障 {unknown}：请从这些里选 {list(FAULTS)}")


@dataclass(frozen=True)
class FaultCall:
    """One call through a FaultyTool: when, which fault, how long it took (clock seconds)."""

    number: int
    start: float
    end: float
    fault: str


class FaultyTool:
    """A wrapper that makes `tool` fail on purpose; see inject_faults."""

    def __init__(self, tool: Callable[..., Any], plan: Iterable[str] | None = None,
                 rates: dict[str, float] | None = None, seed: int | None = 0,
                 latency: float = 0.1, retry_after: float = 2.0) -> None:
        self.tool = tool
        self.__name__ = getattr(tool, "__name__", "tool")
        self.__doc__ = getattr(tool, "__doc__", None)
        self.plan: deque[str] = deque()
        self.set_plan(plan or [])
        self.rates: dict[str, float] = {}
        self.set_rates(rates or {})
        self.rng = random.Random(seed)
        self.latency = latency
        self.retry_after = retry_after
        self.calls: list[FaultCall] = []

    def set_plan(self, plan: Iterable[str]) -> None:
        """Faults for the next calls, in order; after the plan, rates decide."""
        plan = list(plan)
        _known(plan)
        self.plan = deque(plan)

    def set_rates(self, rates: dict[str, float]) -> None:
        """Probability of each fault per call (the rest is "ok"); must sum to at most 1."""
        _known(rates)
        if any(not 0 <= p <= 1 for p in rates.values()) or sum(rates.values()) > 1 + 1e-9:
            raise ValueError(f"rates 里每种故障的概率应在 0 到 1 之间、加起来不超过 1，收到 {rates}：请把概率调小，"
                             "例如 {\"timeout\": 0.2, \"server_error\": 0.1}")
        self.rates = dict(rates)

    def next_fault(self) -> str:
        if self.plan:
            return self.plan.popleft()
        draw, acc = self.rng.random(), 0.0
        for fault, p in self.rates.items():
            acc += p
            if draw < acc:
                return fault
        return "ok"

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        clock = get_clock()
        fault = self.next_fault()
        start = clock.now()
        try:
            if fault == "hang":
                await clock.sleep(float("inf"))
            await clock.sleep(self.latency)
            if fault in ("ok", "partial"):
                value = self.tool(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
                if fault == "partial":
                    return PartialResult(value, "模拟故障：部分数据未能返回")
                return value
            raise _exception_for(fault, self.retry_after)
        finally:
            self.calls.append(FaultCall(len(self.calls) + 1, start, clock.now(), fault))

    def __repr__(self) -> str:
        return f"FaultyTool({self.__name__}, plan={list(self.plan)}, rates={self.rates})"


def inject_faults(tool: Callable[..., Any], plan: Iterable[str] | None = None, *,
                  rates: dict[str, float] | None = None, seed: int | None = 0,
                  latency: float = 0.1, retry_after: float = 2.0) -> FaultyTool:
    """Wrap `tool` so its calls fail by `plan` (a list of FAULTS names), then by seeded `rates`.

    Raises ValueError for an unknown fault name or rates outside [0, 1].
    """
    return FaultyTool(tool, plan, rates, seed, latency, retry_after)
