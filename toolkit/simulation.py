"""Simulated runs for the classroom: what the panels, the charts, the notebooks and the benchmark replay.

* `simulate_batch`: a batch of tool calls with faults injected at given rates, through
  a real ToolExecutor on a SimulatedClock (the failure panel's Run);
* `herd_arrivals` / `herd_peaks`: when many clients' retries arrive after one outage,
  per jitter mode (the thundering herd);
* `course_tools_with_fault`: the course's tools with one fault in the sales tool or in
  its data (the agent panel's scenarios).

Nothing here draws or shows anything, and everything is deterministic: same
arguments, same records.
"""
from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, get_args

from .agent.sync import run_sync
from .clock import SimulatedClock, use_clock
from .breaker import CircuitBreaker
from .executor import ToolExecutor
from .registry import Tool, ToolRegistry
from .faults import inject_faults
from .backoff import Backoff, Jitter
from .retry import RetryBudget, RetryPolicy

__all__ = ["simulate_batch", "scaled_rates", "herd_arrivals", "herd_peaks", "herd_histogram",
           "course_tools_with_fault", "SALES_FAULTS", "RETRY_AFTER_S", "BUDGET_CAPACITY", "BREAKER_THRESHOLD",
           "BREAKER_COOLDOWN"]

RETRY_AFTER_S = 2.0           # the Retry-After a simulated 429 carries
BUDGET_CAPACITY = 100         # retry budget when switched on: 20 retries (5 tokens each), 10 timeouts
BREAKER_THRESHOLD, BREAKER_COOLDOWN = 5, 10.0
JITTER_MODES: tuple[str, ...] = get_args(Jitter)  # "none", "full", "equal", "decorrelated"


# --- a batch of calls with injected faults ---------------------------------------------------------

async def _lookup_order(order_id: int) -> dict:
    """The batch's default tool: an order lookup that always works (the faults come from outside)."""
    return {"order_id": order_id, "status": "已发货"}


_ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "integer"}},
                 "required": ["order_id"], "additionalProperties": False}


def scaled_rates(rates: dict[str, float]) -> tuple[dict[str, float], bool]:
    """(rates as given, False), or scaled down to sum to 1 when they add up to more (then True)."""
    total = sum(rates.values())
    if total <= 1:
        return {k: v for k, v in rates.items() if v > 0}, False
    return {k: v / total for k, v in rates.items() if v > 0}, True


def simulate_batch(*, rates: dict[str, float], latency: float = 0.1, calls: int = 50, concurrency: int = 10,
                   max_retries: int = 3, jitter: str = "full", budget: bool = False, breaker: bool = False,
                   seed: int = 0, tool: Callable[..., Any] | None = None) -> dict:
    """Run `calls` tool calls through a ToolExecutor with faults at `rates`, on SimulatedClock(seed).

    Returns {"executor", "results", "events" (every ToolEvent the executor emitted: attempts,
    waits, the breaker's and the budget's), "tool" (the FaultyTool), "simulated_s",
    "leftover_tasks", "scaled"}. Same arguments, same results. Works from a thread that runs
    an event loop too (a notebook's button handler). Raises ValueError for an unknown fault
    or jitter.
    """
    rates, scaled = scaled_rates(rates)
    policy = RetryPolicy(max_retries=max_retries, backoff=Backoff(jitter=jitter))  # type: ignore[arg-type]

    async def batch() -> dict:
        with use_clock(SimulatedClock(seed=seed)) as clock:
            faulty = inject_faults(tool or _lookup_order, rates=rates, seed=seed, latency=latency,
                                   retry_after=RETRY_AFTER_S)
            registry = ToolRegistry([Tool("lookup_order", faulty, "查询订单状态", _ORDER_SCHEMA, kind="query")])
            events: list = []
            executor = ToolExecutor(policy=policy, registry=registry, concurrency=concurrency, hooks=[events.append],
                                    budget=RetryBudget(capacity=BUDGET_CAPACITY) if budget else None,
                                    breaker=CircuitBreaker(BREAKER_THRESHOLD, BREAKER_COOLDOWN) if breaker else None)
            batch_calls = [{"id": f"call_{i}", "type": "function",
                            "function": {"name": "lookup_order", "arguments": f'{{"order_id": {1000 + i}}}'}}
                           for i in range(calls)]
            results = await executor.run_tool_calls(batch_calls)
            leftover = len(asyncio.all_tasks()) - 1
            return {"executor": executor, "results": results, "events": events, "tool": faulty,
                    "simulated_s": clock.now(), "leftover_tasks": leftover, "scaled": scaled}

    return run_sync(batch())


# --- the thundering herd ------------------------------------------------------------------------

def herd_arrivals(clients: int = 100, *, retries: int = 4, seed: int = 0, base: float = 1.0,
                  cap: float = 30.0) -> dict[str, list[float]]:
    """When each retry of `clients` clients arrives (seconds), per jitter mode.

    All clients fail at t=0 and every retry fails too (the service stays down), so
    client i retries after the cumulative waits of
    `Backoff(base, 2, cap, mode).schedule(retries, seed=seed * 1_000_003 + i)`.
    Returns {mode: sorted arrival times}; each list has clients × retries entries.
    Raises ValueError for clients or retries < 1.
    """
    if clients < 1 or retries < 1:
        raise ValueError(f"clients 和 retries 至少为 1，收到 clients={clients}, retries={retries}：请改成 1 或更大")
    arrivals: dict[str, list[float]] = {}
    for mode in JITTER_MODES:
        policy = Backoff(base=base, cap=cap, jitter=mode)  # type: ignore[arg-type]
        times = []
        for i in range(clients):
            t = 0.0
            for wait in policy.schedule(retries, seed=seed * 1_000_003 + i):
                t += wait
                times.append(t)
        arrivals[mode] = sorted(times)
    return arrivals


def herd_histogram(times: Sequence[float], bin_ms: int) -> list[int]:
    """How many of `times` (seconds) fall in each `bin_ms` window from 0 to the last one."""
    width = bin_ms / 1000.0
    last = max(times, default=0.0)
    counts = [0] * (int(last / width + 1e-9) + 1)
    for t in times:
        counts[int(t / width + 1e-9)] += 1
    return counts


def herd_peaks(clients: int = 100, *, retries: int = 4, bin_ms: int = 100, seed: int = 0,
               base: float = 1.0, cap: float = 30.0) -> dict[str, int]:
    """The largest number of retries arriving within one `bin_ms` window, per jitter mode.

    Raises ValueError for clients, retries or bin_ms < 1."""
    if bin_ms <= 0:
        raise ValueError(f"bin_ms 必须大于 0，收到 {bin_ms}：请改成正数，例如 100")
    arrivals = herd_arrivals(clients, retries=retries, seed=seed, base=base, cap=cap)
    return {mode: max(herd_histogram(times, bin_ms)) for mode, times in arrivals.items()}


# --- the course's tools with one fault --------------------------------------------------------------

SALES_FAULTS = {
    "none": "无故障",
    "missing_file": "数据文件不存在",
    "bad_row": "CSV 里有一行坏数据",
    "timeouts": "前两次超时，第三次成功",
    "rate_limited": "一直被限流（429）",
}


@contextlib.contextmanager
def course_tools_with_fault(fault: str) -> Iterator[ToolRegistry]:
    """The course's tools (toolkit.tools.default_registry) with one fault of SALES_FAULTS.

    "missing_file" / "bad_row": every tool reads a temporary copy of the data in which
    sales.csv is missing or has a bad row (removed when the block ends; the environment
    is not touched); "timeouts" / "rate_limited": the sales tool is wrapped by inject_faults
    (two timeouts then success; 429 every time, Retry-After RETRY_AFTER_S).
    Raises ValueError for a fault not in SALES_FAULTS.
    """
    from .tools import course_dir, data_dir, default_registry

    if fault not in SALES_FAULTS:
        raise ValueError(f"fault 只能是 {list(SALES_FAULTS)} 之一，收到 {fault!r}：请改成其中之一")
    if fault not in ("missing_file", "bad_row"):
        registry = default_registry()
        plan = {"timeouts": ["timeout", "timeout", "ok"], "rate_limited": ["rate_limit"] * 50}.get(fault)
        if plan is not None:
            sales = registry.get("analyze_sales_csv")
            registry.add(Tool(sales.name, inject_faults(sales.fn, plan, latency=0.2, retry_after=RETRY_AFTER_S),
                              sales.description, sales.parameters, sales.kind, sales.writes, sales.fallback))
        yield registry
        return
    with tempfile.TemporaryDirectory(prefix="toolkit-course-data-") as tmp:
        for item in data_dir().iterdir():
            if item.is_file() and item.name != "sales.csv":
                shutil.copy(item, tmp)
        if fault == "bad_row":
            shutil.copy(course_dir() / "data" / "faults" / "sales" / "quantity_abc.csv", Path(tmp) / "sales.csv")
        yield default_registry(data_dir=tmp)
