"""Row 8: the failure panel's Run, as an instructor presses it live, through to the redrawn figures.

One press = the batch (100 calls, 30 % faults: six kinds at 5 % each, concurrency
10, 3 retries, full jitter) through a real ToolExecutor on a SimulatedClock, then
the retry timeline and the call statistics drawn by toolkit.viz and encoded as
the PNGs the panel shows. Beside it, in the same rounds: drawing and encoding the
same two figures from the precomputed executor (what a press costs beyond the
drawing), and the batch alone. Target: median press ≤ 250 ms on this machine.
"""
from __future__ import annotations

import time

from ._stats import interleaved, line, per_round, row, summarize, target, timed

KEY = "panel"
TITLE = "故障注入面板：按下运行到图重绘完成"
EN = "Failure panel Run, 100 calls, 30 % faults, concurrency 10, through to redrawn figures"

CALLS, CONCURRENCY, TARGET_MS = 100, 10, 250.0


def _cpu_ms(fn) -> float:
    """CPU milliseconds of this process for one fn(): close to the wall time on an idle core."""
    t0 = time.process_time()
    fn()
    return (time.process_time() - t0) * 1000


def run(quick: bool = False) -> dict:
    """Measure row 8; returns the row dict (see _stats.row)."""
    try:
        from toolkit.widgets import FailurePanel, draw_batch, simulate_batch
    except ImportError as exc:  # ipywidgets or matplotlib not installed
        return row(KEY, TITLE, EN, status="skipped", note=f"缺少依赖：{exc}")
    rounds = 4 if quick else 15
    panel = FailurePanel(calls=CALLS, concurrency=CONCURRENCY, seed=0)
    settings = panel.settings()
    assert abs(sum(settings["rates"].values()) - 0.30) < 1e-9, settings["rates"]
    executor = simulate_batch(**settings)["executor"]  # the precomputed data

    times = interleaved({
        "press": timed(panel.run),
        "draw": timed(lambda: draw_batch(executor)),
        "batch": timed(lambda: simulate_batch(**settings)),
    }, rounds)
    press, draw, batch = (summarize([t * 1000 for t in times[k]]) for k in ("press", "draw", "batch"))
    cpu = summarize([_cpu_ms(panel.run) for _ in range(max(rounds // 3, 2))])
    ratio = summarize(per_round(times["press"], times["draw"], lambda a, b: a / b))
    attempts = sum(r.attempts for r in panel.results)
    lines = [
        line("按下运行 → 两张图重绘（PNG）", "Run pressed → both figures redrawn (PNG)", press["median"], "ms",
             press["spread"], best=press["min"]),
        line("同样两张图，从预先算好的数据画", "the same two figures drawn from precomputed data", draw["median"], "ms",
             draw["spread"], best=draw["min"]),
        line("其中：批量调用本身（模拟时钟）", "of which: the batch itself (simulated clock)", batch["median"], "ms",
             batch["spread"], best=batch["min"]),
        line("按下运行的 CPU 时间（不受其他进程排队影响）", "Run pressed: CPU time (process_time, unaffected by "
             "waiting for a core)", cpu["median"], "ms", cpu["spread"], best=cpu["min"]),
        line("比值 按下运行 / 只画图", "ratio Run / drawing only", ratio["median"], "×", ratio["spread"]),
        line("每次运行：调用 / 尝试", "per press: calls / attempts", f"{len(panel.results)} / {attempts}", ""),
    ]
    targets = [target(f"按下运行到重绘的中位数 ≤ {TARGET_MS:g} ms", f"median Run to redrawn figures ≤ {TARGET_MS:g} ms",
                      press["median"], "<=", TARGET_MS, "ms")]
    note = (f"{rounds} 轮交替测量；摘要：{panel.last_summary}。比值里多出来的部分是批量调用本身和 Image 控件赋值")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"press_ms": press, "press_cpu_ms": cpu, "draw_ms": draw, "batch_ms": batch, "ratio": ratio,
                     "calls": len(panel.results), "attempts": attempts, "summary": panel.last_summary})
