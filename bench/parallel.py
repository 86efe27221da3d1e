"""Row 3: a model's parallel tool calls through ToolExecutor.run_tool_calls and a ToolRegistry.

Real time: 50 calls that each sleep 100 ms on the real clock (asyncio.sleep),
at most 10 at a time: the ideal wall time is 5 waves x 0.1 s = 0.5 s.
Simulated time: 1,000 and 10,000 calls all in flight at once on a
SimulatedClock must finish without error; the tracemalloc peak per call
shows whether memory per call stays flat as the batch grows.
"""
from __future__ import annotations

import asyncio
import json
import time
import tracemalloc

from toolkit import SimulatedClock, Tool, ToolExecutor, ToolRegistry, get_clock, use_clock

from ._stats import line, row, summarize, target

KEY = "parallel"
TITLE = "并行工具调用（run_tool_calls + ToolRegistry）"
EN = "Parallel tool calls (run_tool_calls + ToolRegistry)"

CALLS, LATENCY, CONCURRENCY = 50, 0.1, 10
IDEAL = CALLS / CONCURRENCY * LATENCY  # 0.5 s


async def slow_lookup(order_id: int) -> dict:
    """100 ms of real waiting, like a remote API."""
    await asyncio.sleep(LATENCY)
    return {"order_id": order_id, "status": "已发货"}


async def simulated_lookup(order_id: int) -> dict:
    """100 ms on the current clock (a SimulatedClock here: no real waiting)."""
    await get_clock().sleep(LATENCY)
    return {"order_id": order_id, "status": "已发货"}


_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "integer"}},
           "required": ["order_id"], "additionalProperties": False}


def registry_with(fn) -> ToolRegistry:
    return ToolRegistry([Tool("lookup_order", fn, "查询订单状态", _SCHEMA, kind="query")])


def tool_calls(n: int) -> list[dict]:
    """n tool calls in the openai Chat Completions shape."""
    return [{"id": f"call_{i}", "type": "function",
             "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": i})}} for i in range(n)]


def real_wall_time() -> tuple[float, int]:
    """Seconds for 50 real 100 ms calls at concurrency 10; and how many succeeded."""
    executor = ToolExecutor(max_retries=2, concurrency=CONCURRENCY, registry=registry_with(slow_lookup))
    calls = tool_calls(CALLS)

    async def go() -> tuple[float, int]:
        t0 = time.perf_counter()
        results = await executor.run_tool_calls(calls)
        return time.perf_counter() - t0, sum(r.ok for r in results)

    return asyncio.run(go())


def simulated_batch(n: int) -> dict:
    """n simulated calls all in flight at once: errors, simulated and real seconds, peak memory."""
    calls = tool_calls(n)

    async def go() -> list:
        executor = ToolExecutor(max_retries=2, concurrency=n, registry=registry_with(simulated_lookup))
        return await executor.run_tool_calls(calls)

    with use_clock(SimulatedClock(seed=0)):
        t0 = time.perf_counter()
        asyncio.run(go())
        untraced = time.perf_counter() - t0
    with use_clock(SimulatedClock(seed=0)) as clock:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            t0 = time.perf_counter()
            results = asyncio.run(go())
            real = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    return {"calls": n, "ok": sum(r.ok for r in results), "errors": sum(not r.ok for r in results),
            "simulated_s": clock.now(), "real_s": untraced, "real_s_traced": real, "peak_bytes": peak, "peak_per_call_bytes": peak / n}


def run(quick: bool = False) -> dict:
    """Measure row 3; returns the row dict (see _stats.row)."""
    repeats = 3 if quick else 7
    sim_sizes = [100, 1000] if quick else [1000, 10_000]
    walls, oks = [], []
    real_wall_time()  # warm-up, unrecorded: the first call imports jsonschema (see row 4)
    for _ in range(repeats):
        wall, ok = real_wall_time()
        walls.append(wall)
        oks.append(ok)
    w = summarize(walls)
    sims = [simulated_batch(n) for n in sim_sizes]
    small, big = sims[0], sims[-1]
    growth = big["peak_per_call_bytes"] / small["peak_per_call_bytes"]
    lines = [
        line(f"{CALLS} 次 × {LATENCY * 1000:g} ms，并发 {CONCURRENCY}：墙钟时间", f"{CALLS} calls × "
             f"{LATENCY * 1000:g} ms, concurrency {CONCURRENCY}: wall time", w["median"], "s", w["spread"],
             min=w["min"], max=w["max"]),
        line(f"比值 墙钟 / 理想 {IDEAL:g} s", f"ratio wall / ideal {IDEAL:g} s", w["median"] / IDEAL, "×"),
    ]
    for sim in sims:
        lines.append(line(f"{sim['calls']} 次模拟并发调用：成功 / 失败，模拟耗时",
                          f"{sim['calls']} simulated concurrent calls: ok / failed, simulated time",
                          f"{sim['ok']} / {sim['errors']}，{sim['simulated_s']:g} s", "",
                          real_s=sim["real_s"]))
        lines.append(line(f"{sim['calls']} 次模拟调用：真实耗时 / 每次", f"{sim['calls']} simulated calls: real "
                          "time per call", sim["real_s"] / sim["calls"] * 1e6, "µs/次"))
        lines.append(line(f"{sim['calls']} 次模拟调用：tracemalloc 峰值 / 每次", f"{sim['calls']} simulated calls: "
                          "tracemalloc peak per call", sim["peak_per_call_bytes"] / 1024, "KB/次",
                          total_mb=sim["peak_bytes"] / 1e6))
    lines.append(line(f"每次调用内存 {big['calls']} / {small['calls']}", f"memory per call, {big['calls']} vs "
                      f"{small['calls']} calls", growth, "×"))
    targets = [
        target(f"墙钟 ≤ 理想 × 1.1（{IDEAL * 1.1:g} s）", f"wall ≤ 1.1 × ideal ({IDEAL * 1.1:g} s)", w["median"], "<=",
               IDEAL * 1.1, "s"),
        target(f"{big['calls']} 次模拟调用零失败", f"{big['calls']} simulated calls, no failure", big["errors"], "<=",
               0, "次"),
        target("每次调用内存不随批量增长（≤ 1.5×）", "memory per call flat as the batch grows (≤ 1.5×)", growth, "<=",
               1.5, "×"),
    ]
    note = (f"真实时钟 {repeats} 次取中位数（每次成功数 {min(oks)}–{max(oks)}/{CALLS}）；"
            "模拟批次全部同时在途（并发上限 = 批量），峰值含 call_history 中保留的结果")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"wall_s": w, "ideal_s": IDEAL, "ok_counts": oks, "simulated": sims})
