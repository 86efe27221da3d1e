"""Row 7: drawing the charts of a 1,000-call history next to an empty figure of the same size.

A 1,000-call batch (four tools, about 30 % faults, retries on the simulated clock) is
drawn by `retry_timeline` and `call_stats` and rendered to PNG with Agg, as a widget or
a notebook does. Each round renders, side by side and in rotating order:

* the chart itself;
* the same chart emptied: the same figure, axes, titles, tick labels and legend, with
  every data artist (bars, lines, histograms, labels of data) removed: the fixed cost of
  a chart of that size, which the data should not dwarf (target: chart ≤ 2 × this);
* a blank figure of the same size (no axes at all): the floor of rasterising and
  encoding that many pixels, shown for scale (no target: Chinese tick labels and
  titles alone cost many times more than an empty canvas).

Building the figure (Python objects, before drawing) is timed separately.
"""
from __future__ import annotations

import asyncio
import io
import time

from ._stats import interleaved, line, per_round, row, summarize, target

KEY = "charts"
TITLE = "1000 次调用的图表渲染 对比 同尺寸空图"
EN = "Chart rendering of a 1,000-call history vs an empty figure of the same size"

CALLS = 1000
RATES = {"timeout": 0.1, "rate_limit": 0.05, "server_error": 0.1, "permission": 0.03, "partial": 0.02}


def history(calls: int = CALLS):
    """(executor, results) for `calls` concurrent calls over four faulty tools, on the simulated clock."""
    from toolkit import SimulatedClock, ToolExecutor, inject_faults, use_clock

    async def go():
        executor = ToolExecutor(max_retries=3, concurrency=100)
        tools = [inject_faults(lambda: {"ok": 1}, rates=RATES, seed=s) for s in range(4)]
        await asyncio.gather(*[executor.execute(tools[i % 4], f"tool_{i % 4}") for i in range(calls)])
        return executor
    with use_clock(SimulatedClock(seed=0)):
        executor = asyncio.run(go())
    return executor, list(executor.call_history)


def png_seconds(fig) -> float:
    buffer = io.BytesIO()
    t0 = time.perf_counter()
    fig.savefig(buffer, format="png")
    return time.perf_counter() - t0


def emptied(fig):
    """`fig` with every data artist removed: axes, titles, ticks and legends stay."""
    for ax in fig.axes:
        for artist in [*ax.collections, *ax.patches, *ax.lines, *ax.texts, *ax.images]:
            artist.remove()
    return fig


def blank_like(fig):
    from toolkit.viz import ChartFigure

    return ChartFigure(figsize=tuple(fig.get_size_inches()), dpi=fig.dpi)


def run(quick: bool = False) -> dict:
    """Measure row 7; returns the row dict (see _stats.row)."""
    from toolkit import viz

    rounds = 2 if quick else 7
    executor, results = history(200 if quick else CALLS)
    attempts = sum(len(r.trace) for r in results)
    charts = {"timeline": lambda: viz.retry_timeline(results), "stats": lambda: viz.call_stats(executor)}
    contenders = {}
    for name, make in charts.items():
        contenders[f"{name}"] = lambda make=make: png_seconds(make())
        contenders[f"{name}_empty"] = lambda make=make: png_seconds(emptied(make()))
        contenders[f"{name}_blank"] = lambda make=make: png_seconds(blank_like(make()))

        def build(make=make) -> float:
            t0 = time.perf_counter()
            make()
            return time.perf_counter() - t0
        contenders[f"{name}_build"] = build
    samples = interleaved(contenders, rounds)
    lines, targets, data = [], [], {"calls": len(results), "attempts": attempts, "rounds": rounds}
    labels = {"timeline": ("retry_timeline", "retry_timeline"), "stats": ("call_stats", "call_stats")}
    for name in charts:
        zh, en = labels[name]
        full = summarize(samples[name])
        empty = summarize(samples[f"{name}_empty"])
        blank = summarize(samples[f"{name}_blank"])
        build = summarize(samples[f"{name}_build"])
        ratio = summarize(per_round(samples[name], samples[f"{name}_empty"], lambda a, b: a / b))
        ratio_blank = summarize(per_round(samples[name], samples[f"{name}_blank"], lambda a, b: a / b))
        lines += [
            line(f"{zh}：渲染 PNG", f"{en}: render to PNG", full["median"] * 1e3, "ms", full["spread"],
                 best=full["min"] * 1e3),
            line(f"{zh}：同一张图去掉数据", f"{en}: same figure, data removed", empty["median"] * 1e3, "ms",
                 empty["spread"]),
            line(f"{zh}：同尺寸空白画布", f"{en}: blank canvas of the same size", blank["median"] * 1e3, "ms",
                 blank["spread"]),
            line(f"{zh}：构建图（不含渲染）", f"{en}: building the figure (no drawing)", build["median"] * 1e3, "ms",
                 build["spread"]),
            line(f"{zh}：比值 图 / 去掉数据", f"{en}: ratio chart / data removed", ratio["median"], "×",
                 ratio["spread"]),
            line(f"{zh}：比值 图 / 空白画布", f"{en}: ratio chart / blank canvas", ratio_blank["median"], "×",
                 ratio_blank["spread"]),
        ]
        targets.append(target(f"{zh} 渲染 ≤ 2 × 同尺寸空图（去掉数据）",
                              f"{en} render ≤ 2 × the empty figure of the same size (data removed)",
                              ratio["median"], "<=", 2.0, "×"))
        data[name] = {"render_s": full, "emptied_s": empty, "blank_s": blank, "build_s": build,
                      "ratio_emptied": ratio, "ratio_blank": ratio_blank}
    note = (f"{len(results)} 次调用、{attempts} 次尝试；{rounds} 轮交替；Agg 渲染 PNG，{viz.DPI} dpi；"
            f"字体 {viz.font_family()}")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note, data=data)
