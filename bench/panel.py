"""Row 8: the failure panel's Run, as an instructor presses it live, through to the redrawn figures.

One press = the batch (100 calls, 30 % faults: six kinds at 5 % each, concurrency
10, 3 retries, full jitter) through a real ToolExecutor on a SimulatedClock, then
the retry timeline and the call statistics redrawn in place by the panel's
toolkit.viz.LiveCharts and encoded as the two PNGs the panel shows. The seed
alternates between 0 and 1 from press to press, so every press draws other data
into the figures the previous press left, as after moving a slider.

Beside it, in the same rounds: the same press in presentation mode (`big=True`, what chapter 09 shows: larger
text, the two pictures encoded as SVG), redrawing the same figures from precomputed batches
(what a press costs beyond the drawing), the batch alone, and drawing the same two
pictures anew with `retry_timeline` and `call_stats`, as a notebook cell does (what
the live charts save). Target: median press ≤ 250 ms on this machine. The browser test
(tests/test_browser.py) prints what a click to both redrawn pictures took in JupyterLab; it asserts no time.
"""
from __future__ import annotations

import io
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


def _notebook_charts(executor) -> None:
    """The same two pictures drawn anew, as a notebook cell draws them, and encoded as PNG."""
    from toolkit import viz

    for fig in (viz.retry_timeline(list(executor.call_history)), viz.call_stats(executor)):
        fig.savefig(io.BytesIO(), format="png")


def run(quick: bool = False) -> dict:
    """Measure row 8; returns the row dict (see _stats.row)."""
    try:
        from toolkit.simulation import simulate_batch
        from toolkit.viz import LiveCharts
        from toolkit.widgets import FailurePanel
    except ImportError as exc:  # ipywidgets or matplotlib not installed
        return row(KEY, TITLE, EN, status="skipped", note=f"缺少依赖：{exc}")
    rounds = 4 if quick else 15
    panel = FailurePanel(calls=CALLS, concurrency=CONCURRENCY, seed=0, big=False)
    big = FailurePanel(calls=CALLS, concurrency=CONCURRENCY, seed=0, big=True)
    settings = panel.settings()
    assert big.settings() == settings
    assert abs(sum(settings["rates"].values()) - 0.30) < 1e-9, settings["rates"]
    batches = [simulate_batch(**{**settings, "seed": seed}) for seed in (0, 1)]  # precomputed
    charts = LiveCharts()
    turn = {"press": 0, "big": 0, "draw": 0}

    def press() -> None:
        panel.seed.value = turn["press"] % 2
        turn["press"] += 1
        panel.run()

    def press_big() -> None:
        big.seed.value = turn["big"] % 2
        turn["big"] += 1
        big.run()

    def draw() -> None:
        batch = batches[turn["draw"] % 2]
        charts.draw(batch["executor"], batch["events"])
        turn["draw"] += 1

    times = interleaved({
        "press": timed(press),
        "big": timed(press_big),
        "draw": timed(draw),
        "batch": timed(lambda: simulate_batch(**settings)),
        "anew": timed(lambda: _notebook_charts(batches[0]["executor"])),
    }, rounds)
    press_ms, big_ms, draw_ms, batch_ms, anew_ms = (summarize([t * 1000 for t in times[k]])
                                                    for k in ("press", "big", "draw", "batch", "anew"))
    big_ratio = summarize(per_round(times["big"], times["press"], lambda a, b: a / b))
    assert big.png["timeline"].startswith(b"<?xml") and panel.png["timeline"].startswith(b"\x89PNG")
    cpu = summarize([_cpu_ms(press) for _ in range(max(rounds // 3, 2))])
    ratio = summarize(per_round(times["press"], times["draw"], lambda a, b: a / b))
    saved = summarize(per_round(times["draw"], times["anew"], lambda a, b: a / b))
    attempts = sum(r.attempts for r in panel.results)
    lines = [
        line("按下运行 → 两张图重绘（PNG）", "Run pressed → both figures redrawn (PNG)", press_ms["median"], "ms",
             press_ms["spread"], best=press_ms["min"]),
        line("投影模式（大字，SVG）按下运行 → 两张图重绘", "presentation mode (big text, SVG): Run pressed → both "
             "figures redrawn", big_ms["median"], "ms", big_ms["spread"], best=big_ms["min"]),
        line("比值 投影模式 / 普通（PNG）", "ratio presentation mode / normal (PNG)", big_ratio["median"], "×",
             big_ratio["spread"]),
        line("同样两张图，从预先算好的数据重绘", "the same two figures redrawn from precomputed data", draw_ms["median"],
             "ms", draw_ms["spread"], best=draw_ms["min"]),
        line("其中：批量调用本身（模拟时钟）", "of which: the batch itself (simulated clock)", batch_ms["median"], "ms",
             batch_ms["spread"], best=batch_ms["min"]),
        line("按下运行的 CPU 时间（不受其他进程排队影响）", "Run pressed: CPU time (process_time, unaffected by "
             "waiting for a core)", cpu["median"], "ms", cpu["spread"], best=cpu["min"]),
        line("比值 按下运行 / 只重绘", "ratio Run / redrawing only", ratio["median"], "×", ratio["spread"]),
        line("同样两张图，像笔记本单元格那样新画（retry_timeline + call_stats）",
             "the same two pictures drawn anew, as a notebook cell does (retry_timeline + call_stats)",
             anew_ms["median"], "ms", anew_ms["spread"], best=anew_ms["min"]),
        line("比值 原地重绘 / 新画", "ratio redrawn in place / drawn anew", saved["median"], "×", saved["spread"]),
        line("每次运行：调用 / 尝试", "per press: calls / attempts", f"{len(panel.results)} / {attempts}", ""),
    ]
    targets = [target(f"按下运行到重绘的中位数 ≤ {TARGET_MS:g} ms", f"median Run to redrawn figures ≤ {TARGET_MS:g} ms",
                      press_ms["median"], "<=", TARGET_MS, "ms"),
               target(f"投影模式按下运行到重绘的中位数 ≤ {TARGET_MS:g} ms",
                      f"presentation mode: median Run to redrawn figures ≤ {TARGET_MS:g} ms",
                      big_ms["median"], "<=", TARGET_MS, "ms")]
    note = (f"{rounds} 轮交替测量，每次按下换一个种子（0/1）；摘要：{panel.last_summary}。"
            "比值里多出来的部分是批量调用本身和 Image 控件赋值")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"press_ms": press_ms, "press_big_ms": big_ms, "big_vs_png": big_ratio, "press_cpu_ms": cpu,
                     "draw_ms": draw_ms, "batch_ms": batch_ms, "anew_ms": anew_ms, "ratio": ratio,
                     "live_vs_anew": saved,
                     "calls": len(panel.results), "attempts": attempts, "summary": panel.last_summary})
