"""Row 1: what one successful call costs through our retry layer, next to tenacity and stamina.

All contenders wrap the same no-op async tool and are configured alike:
3 attempts (max_retries=2), exponential backoff with full jitter (base 1 s,
factor 2, cap 30 s), retry on errors. Ours keeps everything it always keeps:
the ToolResult with timing, the attempt trace, classification of the value,
history and per-tool statistics. The figure is the time per call above a
bare `await tool()`, measured in interleaved rounds in one event loop.
tenacity and stamina are benchmark-only dependencies (requirements-bench.txt),
imported when this row runs.
"""
from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import time
from typing import Awaitable, Callable

from toolkit import Backoff, RetryPolicy, Tool, ToolExecutor, ToolRegistry, call_tool_with_retry

from ._stats import ainterleaved, line, per_call, per_round, row, summarize, target

KEY = "overhead"
TITLE = "每次成功调用的额外开销（对比 tenacity / stamina）"
EN = "Overhead per successful call (vs tenacity / stamina)"

MAX_RETRIES = 2  # = 3 attempts
BACKOFF = Backoff(base=1.0, factor=2.0, cap=30.0, jitter="full")


async def noop() -> None:
    """The tool: does nothing, returns None."""
    return None


async def weather(city: str) -> dict:
    """A realistic small tool: one argument, a small dict back."""
    return {"city": city, "temp": 21, "desc": "晴"}


def _tenacity(fn: Callable) -> Callable:
    import tenacity

    return tenacity.retry(stop=tenacity.stop_after_attempt(MAX_RETRIES + 1),
                          wait=tenacity.wait_random_exponential(multiplier=1, max=30),
                          retry=tenacity.retry_if_exception_type(Exception), reraise=True)(fn)


def _stamina(fn: Callable) -> Callable:
    import stamina

    return stamina.retry(on=Exception, attempts=MAX_RETRIES + 1, timeout=None, wait_initial=1.0,
                         wait_exp_base=2, wait_max=30.0, wait_jitter=1.0)(fn)


async def _tenacity_ctx() -> None:
    import tenacity

    async for attempt in tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(MAX_RETRIES + 1),
            wait=tenacity.wait_random_exponential(multiplier=1, max=30),
            retry=tenacity.retry_if_exception_type(Exception), reraise=True):
        with attempt:
            await noop()


async def _stamina_ctx() -> None:
    import stamina

    async for attempt in stamina.retry_context(on=Exception, attempts=MAX_RETRIES + 1, timeout=None,
                                               wait_initial=1.0, wait_exp_base=2, wait_max=30.0,
                                               wait_jitter=1.0):
        with attempt:
            await noop()


def noop_contenders(n: int, executor: ToolExecutor) -> dict[str, Callable[[], Awaitable[float]]]:
    """The no-op contenders, each a batch of n calls."""
    policy = RetryPolicy(max_retries=MAX_RETRIES, backoff=BACKOFF)
    ten, sta = _tenacity(noop), _stamina(noop)
    return {
        "bare": per_call(noop, n),
        "execute": per_call(lambda: executor.execute(noop, "noop"), n),
        "retry": per_call(lambda: call_tool_with_retry(noop, policy=policy), n),
        "retry_kw": per_call(lambda: call_tool_with_retry(noop, max_retries=MAX_RETRIES), n),
        "tenacity": per_call(ten, n),
        "tenacity_ctx": per_call(_tenacity_ctx, n),
        "stamina": per_call(sta, n),
        "stamina_ctx": per_call(_stamina_ctx, n),
    }


def realistic_contenders(n: int, executor: ToolExecutor) -> dict[str, Callable[[], Awaitable[float]]]:
    """One argument and a small dict back; plus the model path (registry, JSON args, schema)."""
    registry = ToolRegistry([Tool("weather", weather, "查询天气",
                                  {"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"], "additionalProperties": False})])
    call = {"id": "call_1", "function": {"name": "weather", "arguments": '{"city": "北京"}'}}
    ten = _tenacity(weather)
    return {
        "bare": per_call(lambda: weather(city="北京"), n),
        "execute": per_call(lambda: executor.execute(weather, "weather", city="北京"), n),
        "run_tool_call": per_call(lambda: executor.run_tool_call(call, registry), n),
        "tenacity": per_call(lambda: ten(city="北京"), n),
    }


def _overheads(times: dict[str, list[float]]) -> dict[str, list[float]]:
    """Per round, microseconds per call above bare."""
    bare = times["bare"]
    return {name: per_round(values, bare, lambda x, b: (x - b) * 1e6)
            for name, values in times.items() if name != "bare"}


def _ratio(over: dict[str, list[float]], a: str, b: str) -> dict:
    return summarize(per_round(over[a], over[b], lambda x, y: x / y if y > 0 else float("nan")))


def profile_execute(calls: int = 20_000, top: int = 10) -> list[dict]:
    """cProfile of ToolExecutor.execute on the no-op tool: the functions with the most own time."""
    executor = ToolExecutor(max_retries=MAX_RETRIES)

    async def many() -> None:
        for _ in range(calls):
            await executor.execute(noop, "noop")

    profiler = cProfile.Profile()
    profiler.runcall(asyncio.run, many())
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows = []
    for (filename, lineno, func), (cc, nc, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "toolkit" in filename or "json" in filename:
            short = filename.split("/toolkit/")[-1] if "/toolkit/" in filename else filename.rsplit("/", 1)[-1]
            rows.append({"function": f"{short}:{lineno}({func})", "calls": nc,
                         "own_us_per_call": tt / calls * 1e6, "cum_us_per_call": ct / calls * 1e6})
    rows.sort(key=lambda r: -r["own_us_per_call"])
    return rows[:top]


def component_costs(number: int = 20_000) -> dict[str, float]:
    """Real (unprofiled) µs of the pieces one successful execute() builds, each timed alone."""
    import timeit

    from toolkit import ToolResult, get_clock
    from toolkit.fitting import fit_for_model
    from toolkit.retry import Attempt, RetryOutcome

    executor, clock, result = ToolExecutor(), get_clock(), ToolResult("noop", None)
    pieces = {
        "call_tool_with_retry (whole, no-op tool)": None,
        "fit_for_model(None) (budgeting the value)": lambda: fit_for_model(None, 8000),
        "Attempt record (frozen dataclass)": lambda: Attempt(1, 0.0, 1.0, "ok"),
        "RetryOutcome (tuple + record)": lambda: RetryOutcome(None, None, trace=[], info=None,
                                                               gave_up=None, elapsed=0.0),
        "ToolResult record": lambda: ToolResult("noop", None, duration_ms=1.0, attempts=1, call_id=None,
                                                started_at=0.0, args_summary="", trace=[]),
        "history + statistics (_finish)": lambda: executor._finish(result),
        "5 clock reads": lambda: (clock.now(), clock.now(), clock.now(), clock.now(), clock.now()),
    }
    policy = RetryPolicy(max_retries=MAX_RETRIES, backoff=BACKOFF)

    async def retry_batch() -> float:
        t0 = time.perf_counter()
        for _ in range(number):
            await call_tool_with_retry(noop, policy=policy)
        return (time.perf_counter() - t0) / number * 1e6

    out = {}
    for name, fn in pieces.items():
        if fn is None:
            out[name] = min(asyncio.run(retry_batch()) for _ in range(3))
        else:
            out[name] = min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6
    return out


async def _measure(rounds: int, n: int) -> tuple[dict, dict, ToolExecutor]:
    executor = ToolExecutor(max_retries=MAX_RETRIES)  # defaults: history of 10,000, statistics on
    executor.policy = executor.policy.with_(backoff=BACKOFF)
    noop_times = await ainterleaved(noop_contenders(n, executor), rounds)
    real_times = await ainterleaved(realistic_contenders(n, executor), max(rounds // 2, 3))
    return noop_times, real_times, executor


def run(quick: bool = False) -> dict:
    """Measure row 1; returns the row dict (see _stats.row)."""
    rounds, n = (5, 300) if quick else (20, 2000)
    noop_times, real_times, executor = asyncio.run(_measure(rounds, n))
    over, real_over = _overheads(noop_times), _overheads(real_times)
    s = {name: summarize(v) for name, v in over.items()}
    rs = {name: summarize(v) for name, v in real_over.items()}
    ex_vs_ten, rt_vs_ten = _ratio(over, "execute", "tenacity"), _ratio(over, "retry", "tenacity")
    ex_vs_sta = _ratio(over, "execute", "stamina")
    real_ratio = _ratio(real_over, "execute", "tenacity")
    bare = summarize([t * 1e6 for t in noop_times["bare"]])
    history = executor.call_history[-1] if executor.call_history else None
    included = {"history_len": len(executor.call_history),
                "total_calls_counted": executor.get_summary()["total_calls"],
                "last_result_has_timing": bool(history and history.duration_ms >= 0 and history.trace)}
    lines = [
        line("裸调用 await tool()", "bare `await tool()`", bare["median"], "µs/次", bare["spread"]),
        line("ToolExecutor.execute 额外开销", "ToolExecutor.execute overhead", s["execute"]["median"], "µs/次",
             s["execute"]["spread"], best=s["execute"]["min"]),
        line("call_tool_with_retry(policy=…) 额外开销", "call_tool_with_retry(policy=…) overhead",
             s["retry"]["median"], "µs/次", s["retry"]["spread"], best=s["retry"]["min"]),
        line("call_tool_with_retry(max_retries=2) 额外开销", "call_tool_with_retry(max_retries=2) overhead",
             s["retry_kw"]["median"], "µs/次", s["retry_kw"]["spread"], best=s["retry_kw"]["min"]),
        line("tenacity @retry 额外开销", "tenacity @retry overhead", s["tenacity"]["median"], "µs/次",
             s["tenacity"]["spread"], best=s["tenacity"]["min"]),
        line("tenacity AsyncRetrying 额外开销", "tenacity AsyncRetrying overhead", s["tenacity_ctx"]["median"],
             "µs/次", s["tenacity_ctx"]["spread"], best=s["tenacity_ctx"]["min"]),
        line("stamina @retry 额外开销", "stamina @retry overhead", s["stamina"]["median"], "µs/次",
             s["stamina"]["spread"], best=s["stamina"]["min"]),
        line("stamina retry_context 额外开销", "stamina retry_context overhead", s["stamina_ctx"]["median"],
             "µs/次", s["stamina_ctx"]["spread"], best=s["stamina_ctx"]["min"]),
        line("比值 execute / tenacity", "ratio execute / tenacity", ex_vs_ten["median"], "×", ex_vs_ten["spread"]),
        line("比值 call_tool_with_retry / tenacity", "ratio call_tool_with_retry / tenacity", rt_vs_ten["median"],
             "×", rt_vs_ten["spread"]),
        line("比值 execute / stamina", "ratio execute / stamina", ex_vs_sta["median"], "×", ex_vs_sta["spread"]),
        line("[一个参数 + 小字典结果] execute 额外开销", "[1 kwarg, small dict] execute overhead",
             rs["execute"]["median"], "µs/次", rs["execute"]["spread"], best=rs["execute"]["min"]),
        line("[一个参数 + 小字典结果] tenacity 额外开销", "[1 kwarg, small dict] tenacity overhead",
             rs["tenacity"]["median"], "µs/次", rs["tenacity"]["spread"], best=rs["tenacity"]["min"]),
        line("[一个参数 + 小字典结果] 比值 execute / tenacity", "[1 kwarg, small dict] ratio execute / tenacity",
             real_ratio["median"], "×", real_ratio["spread"]),
        line("[模型调用路径] run_tool_call（JSON 参数 + schema 校验）额外开销",
             "[model path] run_tool_call (JSON args + schema check) overhead",
             rs["run_tool_call"]["median"], "µs/次", rs["run_tool_call"]["spread"], best=rs["run_tool_call"]["min"]),
    ]
    targets = [
        target("execute 开销 ≤ 0.33 × tenacity", "execute overhead ≤ 0.33 × tenacity's", ex_vs_ten["median"], "<=",
               0.33, "×"),
        target("execute 开销 < 5 µs", "execute overhead < 5 µs", s["execute"]["median"], "<", 5.0, "µs"),
        target("call_tool_with_retry 开销 ≤ 0.33 × tenacity", "call_tool_with_retry overhead ≤ 0.33 × tenacity's",
               rt_vs_ten["median"], "<=", 0.33, "×"),
        target("call_tool_with_retry 开销 < 5 µs", "call_tool_with_retry overhead < 5 µs", s["retry"]["median"], "<",
               5.0, "µs"),
    ]
    data = {"rounds": rounds, "calls_per_round": n, "overhead_us": s, "realistic_overhead_us": rs,
            "ratios": {"execute/tenacity": ex_vs_ten, "call_tool_with_retry/tenacity": rt_vs_ten,
                       "execute/stamina": ex_vs_sta, "realistic execute/tenacity": real_ratio},
            "bare_us": bare, "included": included,
            "profile_execute_top": profile_execute(3000 if quick else 20_000),
            "components_us": component_costs(2000 if quick else 20_000)}
    note = (f"{rounds} 轮 × {n} 次，轮内交替；开销 = 每轮（该实现 − 裸调用）的中位数；"
            f"execute 包含历史记录（{included['history_len']} 条）、计时、轨迹与结果分类")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note, data=data)
