"""Charts of what the toolkit recorded: retry timelines, backoff, the thundering herd, call statistics.

Every function takes the toolkit's own records (`ToolResult.trace` / `Attempt`,
`RetryOutcome`, `ToolExecutor.call_history` and `get_summary()`, `Backoff.schedule()`,
`smart_truncate`'s output) and returns a `matplotlib.figure.Figure`:

* it never calls `plt.show()` and never leaves a figure in pyplot's list: it is a
  `ChartFigure` (a Figure with `_repr_png_`), so a notebook shows it once, when it is
  the cell's last expression (or with `display(fig)`), whatever the backend, and a
  widget can save it as PNG;
* axes, titles and legends are in Chinese; the same data draws the same picture
  (same PNG bytes with the Agg backend; for SVG set rcParams["svg.hashsalt"] and
  pass metadata={"Date": None} to savefig);
* sizes are modest (8 inches wide, 90 dpi) so stored notebook outputs stay small.

Fonts: importing this module registers the CJK font subset shipped in toolkit/fonts
(TRL Sans CJK SC, a subset of Noto Sans CJK SC under the SIL Open Font License) with
matplotlib, prefers a system CJK font where one is installed (Noto Sans CJK SC,
Source Han Sans, WenQuanYi, Microsoft YaHei, PingFang SC), and sets
`axes.unicode_minus` to False. `setup_fonts(prefer_system=False)` forces the shipped
font. Importing `toolkit` alone never loads matplotlib; this module does.

OUTCOME_COLORS and OUTCOME_LABELS map each attempt outcome ("ok", "partial",
"retryable", "fatal", "timeout") to its colour and Chinese label.
"""
from __future__ import annotations

import io
import json
import math
from collections import Counter
from pathlib import Path
from statistics import median
from typing import Any, Iterable, Sequence

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from .retry import Attempt, Backoff, RetryOutcome
from .results import ToolResult

__all__ = [
    "retry_timeline", "backoff_strategies", "thundering_herd", "herd_peaks", "herd_arrivals",
    "call_stats", "LiveCharts", "breaker_windows", "budget_tokens", "budget_curve", "truncation_map", "truncation_parts",
    "sample_records", "attempt_outcome", "setup_fonts", "font_family", "ChartFigure",
    "OUTCOME_COLORS", "OUTCOME_LABELS", "JITTER_LABELS", "SHIPPED_FONT", "SHIPPED_FAMILY",
]

# --- fonts ---------------------------------------------------------------------------

SHIPPED_FONT = Path(__file__).resolve().parent / "fonts" / "TRLSansCJKsc-Regular.otf"
SHIPPED_FAMILY = "TRL Sans CJK SC"
SYSTEM_CJK_FAMILIES = (
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Microsoft YaHei", "PingFang SC",
    "Hiragino Sans GB", "Heiti SC", "SimHei",
)
_font: dict[str, Any] = {"family": None, "registered": False}


def setup_fonts(prefer_system: bool = True) -> str:
    """Register the shipped CJK subset and make a CJK font matplotlib's first sans-serif.

    With prefer_system (the default) an installed system CJK font wins; with
    prefer_system=False the shipped subset is used even where one is installed (tests
    use this to prove the shipped font covers every label). Sets axes.unicode_minus
    to False (an ASCII hyphen-minus renders in every font). Returns the family used.
    """
    if not _font["registered"]:
        font_manager.fontManager.addfont(str(SHIPPED_FONT))
        _font["registered"] = True
    family = SHIPPED_FAMILY
    if prefer_system:
        installed = {entry.name for entry in font_manager.fontManager.ttflist}
        family = next((name for name in SYSTEM_CJK_FAMILIES if name in installed), SHIPPED_FAMILY)
    _font["family"] = family
    chain = _font_chain()
    ours = set(chain) | {SHIPPED_FAMILY, *SYSTEM_CJK_FAMILIES}  # a second call replaces, not stacks, our choice
    rest = [name for name in matplotlib.rcParams["font.sans-serif"] if name not in ours]
    # matplotlib falls back glyph by glyph only along an explicit family list, not inside "sans-serif"
    matplotlib.rcParams["font.family"] = chain + ["sans-serif"]
    matplotlib.rcParams["font.sans-serif"] = chain + rest
    matplotlib.rcParams["axes.unicode_minus"] = False
    return family


def font_family() -> str:
    """The CJK font family the charts use (see setup_fonts)."""
    return _font["family"] or setup_fonts()


def _font_chain() -> list[str]:
    # matplotlib falls back glyph by glyph along this list; every family in it is looked up for every
    # text drawn, so it stays short: the CJK family (a system one covers more than the shipped subset),
    # then DejaVu Sans for symbols a CJK font may lack
    return [_font["family"] or SHIPPED_FAMILY, "DejaVu Sans"]


def _rc() -> dict[str, Any]:
    """rcParams every chart is drawn under, whatever the caller changed since import."""
    return {"font.family": _font_chain(), "font.sans-serif": _font_chain(), "axes.unicode_minus": False,
            "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
            "xtick.labelsize": 8, "ytick.labelsize": 8}


class ChartFigure(Figure):
    """A Figure that shows itself as PNG in any notebook front end, without pyplot.

    The charts are never registered with pyplot (nothing is shown twice, nothing
    leaks between cells); `_repr_png_` lets IPython display one that is a cell's
    last expression whatever matplotlib backend is active.
    """

    def _repr_png_(self) -> bytes:
        # no bbox_inches="tight": the constrained layout already fits the labels, and
        # "tight" would draw the whole figure twice
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()


setup_fonts()

DPI = 90
WIDTH = 8.0

# --- shared helpers --------------------------------------------------------------------

OUTCOME_COLORS = {
    "ok": "#3a9d5d",         # green
    "partial": "#e8a33d",    # amber
    "retryable": "#e4572e",  # orange-red
    "fatal": "#8e1b1b",      # dark red
    "timeout": "#7b5ea7",    # purple
}
OUTCOME_LABELS = {
    "ok": "成功", "partial": "部分成功", "retryable": "可重试错误", "fatal": "不可重试错误",
    "timeout": "超时（被截断）",
}
STATUS_COLORS = {"success": OUTCOME_COLORS["ok"], "partial": OUTCOME_COLORS["partial"],
                 "error": OUTCOME_COLORS["retryable"]}
STATUS_LABELS = {"success": "成功", "partial": "部分成功", "error": "失败"}
JITTER_MODES = ("none", "full", "equal", "decorrelated")
JITTER_LABELS = {"none": "无抖动 none", "full": "全抖动 full", "equal": "等分抖动 equal",
                 "decorrelated": "去相关抖动 decorrelated"}
WAIT_COLOR = "#6b7280"
RETRY_AFTER_COLOR = "#1f6fb2"
DEADLINE_COLOR = "#c1121f"


def _figure(height: float, width: float = WIDTH) -> Figure:
    with matplotlib.rc_context(_rc()):
        return ChartFigure(figsize=(width, height), dpi=DPI, layout="constrained")


def _empty(message: str, title: str, height: float = 2.2) -> Figure:
    """An empty-state figure: one frame with `message` in the middle."""
    with matplotlib.rc_context(_rc()):
        fig = _figure(height)
        ax = fig.add_subplot()
        ax.set_title(title)
        ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#555555",
                fontsize=11)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.empty_state = True
        return fig


def attempt_outcome(attempt: Attempt) -> str:
    """The colour class of one attempt: ok, partial, retryable, fatal or timeout."""
    if attempt.outcome in ("ok", "partial", "timeout"):
        return attempt.outcome
    if attempt.code == "TIMEOUT":
        return "timeout"
    return "fatal" if attempt.error_type == "fatal" else "retryable"


def _fmt_seconds(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.0f}s"
    if seconds >= 1:
        return f"{seconds:.1f}s"
    return f"{seconds * 1000:.0f}ms"


# --- retry timeline ---------------------------------------------------------------------

class _Row:
    __slots__ = ("label", "attempts", "start", "status", "note")

    def __init__(self, label: str, attempts: list, start: float, status: str, note: str | None = None):
        self.label, self.attempts, self.start, self.status, self.note = label, attempts, start, status, note


# what each injected fault looks like from the caller's side (FaultyTool.calls)
FAULT_OUTCOMES = {"ok": "ok", "partial": "partial", "timeout": "timeout", "hang": "timeout",
                  "connection": "retryable", "rate_limit": "retryable", "server_error": "retryable",
                  "unavailable": "retryable", "auth": "fatal", "permission": "fatal", "bad_args": "fatal"}


def _fault_attempt(call: Any) -> Attempt:
    kind = FAULT_OUTCOMES.get(call.fault, "retryable")
    outcome = kind if kind in ("ok", "partial", "timeout") else "error"
    error_type = kind if kind in ("retryable", "fatal") else None
    return Attempt(call.number, call.start, call.end, outcome, error_type, call.fault)


def _rows(calls: Any) -> list[_Row]:
    if isinstance(calls, (ToolResult, RetryOutcome)):
        calls = [calls]
    elif hasattr(calls, "call_history"):
        calls = list(calls.call_history)
    elif isinstance(getattr(calls, "calls", None), list):  # a FaultyTool: every call it received
        calls = list(calls.calls)
    else:
        calls = list(calls)
    if calls and all(type(c).__name__ == "FaultCall" for c in calls):
        from .faults import FAULTS

        return [_Row(f"{c.number}. {FAULTS.get(c.fault, c.fault)}", [_fault_attempt(c)], c.start,
                     "success" if c.fault == "ok" else "error") for c in calls]
    if calls and all(isinstance(c, Attempt) for c in calls):
        calls = [calls]  # a bare list of attempts is one call's trace
    elif calls and all(type(c).__name__ == "ToolEvent" for c in calls):
        # events a hook collected: each finished call's ToolResult carries its whole trace
        calls = [e.result for e in calls if e.kind == "call_end" and e.result is not None]
    rows = []
    for i, call in enumerate(calls, 1):
        if isinstance(call, ToolResult):
            label = f"{i}. {call.name}"
            rows.append(_Row(label, list(call.trace), call.started_at, call.status,
                             None if call.trace else (call.error_code or "未执行")))
        elif isinstance(call, RetryOutcome):
            attempts = list(call.attempts)
            status = "success" if call.error is None else "error"
            rows.append(_Row(f"{i}. 调用", attempts, attempts[0].start if attempts else 0.0, status))
        elif isinstance(call, (list, tuple)) and all(isinstance(a, Attempt) for a in call):
            rows.append(_Row(f"{i}. 调用", list(call), call[0].start if call else 0.0, "success"))
        else:
            raise TypeError(f"retry_timeline 需要 ToolResult、RetryOutcome 或它们的列表，收到 {type(call).__name__}")
    return rows


class _TimelineGeometry:
    """Where everything in a retry timeline goes, in data coordinates (seconds from the batch's first
    attempt, one row per call): shared by retry_timeline and the live panel's LiveCharts."""

    def __init__(self, rows: list[_Row], deadline: float | None = None) -> None:
        starts = [a.start for r in rows for a in r.attempts] + [r.start for r in rows]
        ends = [a.end + a.wait_after for r in rows for a in r.attempts] + [r.start for r in rows]
        self.rows = rows
        self.t0 = t0 = min(starts)
        self.span = max(max(ends) - t0, deadline or 0.0, 1e-3)
        min_width = self.span * 0.004  # an instant attempt (a sync tool on the simulated clock) stays visible
        self.boxes: dict[str, list] = {key: [] for key in OUTCOME_COLORS}
        self.wait_lines: list = []
        self.retry_after_lines: list = []
        self.hint_marks: list = []
        self.wait_labels: list[tuple[float, int, str, bool]] = []  # (x, row, text, after a 429)
        self.skipped: list[int] = []
        self.attempt_count = 0
        for y, row in enumerate(rows):
            for a in row.attempts:
                x0 = a.start - t0
                x1 = x0 + max(a.end - a.start, min_width)
                self.boxes[attempt_outcome(a)].append([(x0, y - 0.3), (x1, y - 0.3), (x1, y + 0.3), (x0, y + 0.3)])
                self.attempt_count += 1
                if a.wait_after > 0:
                    w0, w1 = a.end - t0, a.end - t0 + a.wait_after
                    hint = getattr(a, "retry_after", None)  # the server's own number, where the trace keeps it
                    limited = a.code == "RATE_LIMITED" or hint is not None
                    (self.retry_after_lines if limited else self.wait_lines).append([(w0, y), (w1, y)])
                    if hint is not None:
                        self.hint_marks.append([(w0 + hint, y - 0.35), (w0 + hint, y + 0.35)])
                    self.wait_labels.append(((w0 + w1) / 2, y, _fmt_seconds(a.wait_after), limited))
            if not row.attempts:
                self.skipped.append(y)

    def skipped_xy(self) -> tuple[list[float], list[int]]:
        return [self.rows[y].start - self.t0 for y in self.skipped], list(self.skipped)


def _label_waits(ax: Any, geo: _TimelineGeometry) -> list:
    """Each wait's length over its gap, and each call that never ran its code; returns the Text artists."""
    texts = []
    backing = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.6}  # readable over a bar
    for x, y, text, limited in geo.wait_labels:
        texts.append(ax.text(x, y - 0.08, text + (" Retry-After" if limited else ""), ha="center", va="bottom",
                             fontsize=7, color=RETRY_AFTER_COLOR if limited else WAIT_COLOR, bbox=backing,
                             gid="wait-label"))
    for y in geo.skipped:
        row = geo.rows[y]
        texts.append(ax.text(row.start - geo.t0, y, f" {row.note}", va="center", fontsize=7, color="#555555",
                             gid="not-run-label"))
    return texts


def retry_timeline(calls: Any, *, deadline: float | None = None, title: str | None = None) -> Figure:
    """One row per call, one bar per attempt coloured by outcome, waits drawn as labelled gaps.

    calls: a ToolResult, a RetryOutcome, a list of them (e.g. `executor.call_history`),
    an executor, one call's list of Attempt, the ToolEvents a hook collected (the
    finished calls are drawn: their "call_end" events carry the results), or a
    FaultyTool / its `.calls` (the tool's side: one row per call it received, coloured
    by the fault injected; no waits, since the tool never sees them). Times are clock seconds from the first
    attempt of the batch. Each attempt is a bar (colours: OUTCOME_COLORS); each backoff
    wait is a dotted line across the gap with its length (a wait that followed a 429 is
    blue and marked Retry-After; where an Attempt carries `retry_after`, a blue tick marks
    the time the server asked for); `deadline` (seconds from the batch start) is a red
    dashed line. A call that never ran (circuit open, refused arguments) shows its code.
    Rows are in the order given (call_history is in order of completion). Waits are
    labelled when there are at most 20 rows; row labels thin out past 40 rows.

    Empty input: returns an empty-state figure saying there are no calls (no error).
    Raises TypeError for records it does not know.
    """
    rows = _rows(calls)
    heading = title or "重试时间线"
    if not rows:
        return _empty("还没有调用记录", heading)
    geo = _TimelineGeometry(rows, deadline)
    n = len(rows)
    with matplotlib.rc_context(_rc()):
        fig = _figure(min(1.3 + 0.28 * n, 9.0))
        ax = fig.add_subplot()
        if n <= 20:
            _label_waits(ax, geo)
        for key, polys in geo.boxes.items():
            if polys:
                ax.add_collection(PolyCollection(polys, facecolors=OUTCOME_COLORS[key], edgecolors="white",
                                                 linewidths=0.5, label=OUTCOME_LABELS[key], gid=f"attempts-{key}"))
        if geo.wait_lines:
            ax.add_collection(LineCollection(geo.wait_lines, colors=WAIT_COLOR, linestyles=":", linewidths=1.2,
                                             label="退避等待", gid="waits"))
        if geo.retry_after_lines:
            ax.add_collection(LineCollection(geo.retry_after_lines, colors=RETRY_AFTER_COLOR, linestyles="--",
                                             linewidths=1.2, label="按 Retry-After 等待", gid="retry-after-waits"))
        if geo.hint_marks:
            ax.add_collection(LineCollection(geo.hint_marks, colors=RETRY_AFTER_COLOR, linewidths=1.5,
                                             label="服务器要求的 Retry-After", gid="retry-after-marks"))
        if geo.skipped:
            ax.plot(*geo.skipped_xy(), "x", color="#555555", markersize=5, label="未执行（熔断/参数被拒）",
                    gid="not-run")
        if deadline is not None:
            ax.axvline(deadline, color=DEADLINE_COLOR, linestyle="--", linewidth=1.2, label=f"总时限 {deadline:g}s",
                       gid="deadline")
        ax.set_xlim(-geo.span * 0.01, geo.span * 1.04)
        ax.set_ylim(n - 0.5, -0.5)
        step = 1 if n <= 40 else math.ceil(n / 25)  # past 40 rows, about 25 labels
        ticks = list(range(0, n, step))
        ax.set_yticks(ticks, [rows[i].label for i in ticks], fontsize=8 if n <= 20 else 6)
        ax.set_xlabel("时间（秒，从第一次尝试算起）")
        ax.set_title(title or f"重试时间线：{n} 次调用，{geo.attempt_count} 次尝试")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=7)
        return fig


# --- backoff strategies --------------------------------------------------------------------

def backoff_strategies(retries: int = 5, *, base: float = 1.0, cap: float = 30.0, seeds: int = 200,
                       factor: float = 2.0) -> Figure:
    """The four jitter modes side by side: the wait before each retry over `seeds` seeds.

    Each panel shows every seed's waits (faint dots), the median (line) and the ceiling
    min(cap, base·factor^n) (dashed), for `Backoff(base, factor, cap, jitter=mode).schedule(retries, seed)`
    with seed = 0..seeds-1. Raises ValueError for retries < 1 or seeds < 1.
    """
    if retries < 1 or seeds < 1:
        raise ValueError(f"retries 和 seeds 至少为 1，收到 retries={retries}, seeds={seeds}")
    with matplotlib.rc_context(_rc()):
        fig = _figure(3.5)
        axes = fig.subplots(1, 4, sharey=True)
        xs = list(range(1, retries + 1))
        for ax, mode in zip(axes, JITTER_MODES):
            policy = Backoff(base=base, factor=factor, cap=cap, jitter=mode)
            schedules = [policy.schedule(retries, seed=s) for s in range(seeds)]
            dots_x = [x + (((s * 7919) % 101) / 100 - 0.5) * 0.35 for s in range(seeds) for x in xs]
            dots_y = [w for sched in schedules for w in sched]
            ax.scatter(dots_x, dots_y, s=3, alpha=0.25, color="#4c72b0", linewidths=0, gid="seed-waits")
            medians = [median(sched[i] for sched in schedules) for i in range(retries)]
            ax.plot(xs, medians, "o-", color="#1d3557", markersize=3, linewidth=1.5, label="中位数", gid="median")
            ax.plot(xs, [policy.ceiling(i) for i in range(retries)], "--", color="#999999", linewidth=1,
                    label="上限 min(cap, base·2^n)", gid="ceiling")
            ax.set_title(JITTER_LABELS[mode], fontsize=9)
            ax.set_xticks(xs)
            ax.set_xlabel("第几次重试")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("等待（秒）")
        axes[0].legend(loc="upper left", fontsize=7, frameon=False)
        fig.suptitle(f"四种抖动方式的退避等待（{seeds} 个随机种子，base={base:g}s，cap={cap:g}s）", fontsize=10)
        return fig


# --- thundering herd ------------------------------------------------------------------------

def herd_arrivals(clients: int = 100, *, retries: int = 4, seed: int = 0, base: float = 1.0,
                  cap: float = 30.0) -> dict[str, list[float]]:
    """When each retry of `clients` clients arrives (seconds), per jitter mode.

    All clients fail at t=0 and every retry fails too (the service stays down), so
    client i retries after the cumulative waits of
    `Backoff(base, 2, cap, mode).schedule(retries, seed=seed * 1_000_003 + i)`.
    Returns {mode: sorted arrival times}; each list has clients × retries entries.
    """
    if clients < 1 or retries < 1:
        raise ValueError(f"clients 和 retries 至少为 1，收到 clients={clients}, retries={retries}")
    arrivals: dict[str, list[float]] = {}
    for mode in JITTER_MODES:
        policy = Backoff(base=base, cap=cap, jitter=mode)
        times = []
        for i in range(clients):
            t = 0.0
            for wait in policy.schedule(retries, seed=seed * 1_000_003 + i):
                t += wait
                times.append(t)
        arrivals[mode] = sorted(times)
    return arrivals


def _histogram(times: Sequence[float], bin_ms: int) -> list[int]:
    width = bin_ms / 1000.0
    last = max(times, default=0.0)
    counts = [0] * (int(last / width + 1e-9) + 1)
    for t in times:
        counts[int(t / width + 1e-9)] += 1
    return counts


def herd_peaks(clients: int = 100, *, retries: int = 4, bin_ms: int = 100, seed: int = 0,
               base: float = 1.0, cap: float = 30.0) -> dict[str, int]:
    """The largest number of retries arriving within one `bin_ms` window, per jitter mode."""
    if bin_ms <= 0:
        raise ValueError(f"bin_ms 必须大于 0，收到 {bin_ms}")
    arrivals = herd_arrivals(clients, retries=retries, seed=seed, base=base, cap=cap)
    return {mode: max(_histogram(times, bin_ms)) for mode, times in arrivals.items()}


def thundering_herd(clients: int = 100, *, retries: int = 4, bin_ms: int = 100, seed: int = 0,
                    base: float = 1.0, cap: float = 30.0) -> Figure:
    """N clients fail at t=0; retry arrivals per `bin_ms` window, one panel per jitter mode.

    Each panel is a histogram (its total is clients × retries) with the peak load
    printed (the numbers herd_peaks returns). Raises ValueError for clients, retries
    or bin_ms < 1.
    """
    if bin_ms <= 0:
        raise ValueError(f"bin_ms 必须大于 0，收到 {bin_ms}")
    arrivals = herd_arrivals(clients, retries=retries, seed=seed, base=base, cap=cap)
    width = bin_ms / 1000.0
    end = max(t for times in arrivals.values() for t in times)
    with matplotlib.rc_context(_rc()):
        fig = _figure(4.6)
        axes = fig.subplots(4, 1, sharex=True)
        for ax, mode in zip(axes, JITTER_MODES):
            counts = _histogram(arrivals[mode], bin_ms)
            edges = [i * width for i in range(len(counts) + 1)]
            ax.stairs(counts, edges, fill=True, color="#4c72b0", gid=f"herd-{mode}")
            peak = max(counts)
            ax.text(0.995, 0.9, f"峰值 {peak} 次/{bin_ms} ms", transform=ax.transAxes, ha="right", va="top",
                    fontsize=8, color=DEADLINE_COLOR if peak >= clients / 2 else "#1d3557", gid="peak")
            ax.set_ylim(0, peak * 1.25 + 1)
            ax.set_ylabel(JITTER_LABELS[mode].split()[0], rotation=0, ha="right", va="center", fontsize=8)
            ax.grid(axis="x", alpha=0.3)
        axes[-1].set_xlim(0, end * 1.02 + width)
        axes[-1].set_xlabel(f"时间（秒）；纵轴：每 {bin_ms} 毫秒到达的重试次数")
        fig.suptitle(f"惊群：{clients} 个客户端在 t=0 同时失败，之后每人重试 {retries} 次", fontsize=10)
        return fig


# --- call statistics ---------------------------------------------------------------------------

def _results_and_summary(source: Any) -> tuple[list[ToolResult], dict[str, dict[str, int]], Any]:
    if hasattr(source, "call_history") and hasattr(source, "get_summary"):
        per_tool = source.get_summary()["per_tool"]
        return list(source.call_history), per_tool, source
    if isinstance(source, ToolResult):
        source = [source]
    results = list(source)
    bad = [type(r).__name__ for r in results if not isinstance(r, ToolResult)]
    if bad:
        raise TypeError(f"call_stats 需要 ToolExecutor 或 ToolResult 列表，收到 {bad[0]}")
    per_tool: dict[str, dict[str, int]] = {}
    for r in results:
        counts = per_tool.setdefault(r.name, {"calls": 0, "success": 0, "partial": 0, "failed": 0, "retries": 0})
        counts["calls"] += 1
        counts["retries"] += r.retries
        counts["success" if r.status == "success" else "partial" if r.status == "partial" else "failed"] += 1
    return results, per_tool, None


def _error_codes(results: Iterable[ToolResult]) -> dict[str, Counter]:
    """{error code: Counter(outcome class)} over every failed attempt, plus calls that never ran."""
    codes: dict[str, Counter] = {}
    for r in results:
        if not r.trace and r.error is not None:  # refused or circuit open: no attempt, one error
            key = "partial" if r.status == "partial" else ("fatal" if r.error_type == "fatal" else "retryable")
            codes.setdefault(str(r.error_code or "UNKNOWN"), Counter())[key] += 1
        for a in r.trace:
            outcome = attempt_outcome(a)
            if outcome == "ok":
                continue
            code = "PARTIAL" if outcome == "partial" else str(a.code or "UNKNOWN")
            codes.setdefault(code, Counter())[outcome] += 1
    return codes


def breaker_windows(results: Iterable[ToolResult], failure_threshold: int = 5,
                    cooldown: float = 30.0) -> dict[str, list[tuple[float, float]]]:
    """When each tool's circuit breaker was open, replayed from the results: {tool: [(start, end)]}.

    The executor keeps no breaker history, so this replays a fresh CircuitBreaker with
    the same settings over the results in the order they ended (clock seconds). A
    window ends after `cooldown`, or earlier when a trial call succeeds. Calls refused
    with CIRCUIT_OPEN are not replayed (the breaker never saw them).
    """
    from .breaker import CircuitBreaker

    replay = CircuitBreaker(failure_threshold=failure_threshold, cooldown=cooldown)
    windows: dict[str, list[list[float]]] = {}
    for r in sorted(results, key=lambda r: r.started_at + r.duration_ms / 1000):
        if r.error_code == "CIRCUIT_OPEN" or r.status == "partial" or r.attempts == 0:
            continue
        end = r.started_at + r.duration_ms / 1000
        before = replay.state(r.name, end)
        replay.record(r.name, r.error_type != "retryable", end)
        after = replay.state(r.name, end)
        spans = windows.setdefault(r.name, [])
        if after == "open":
            if before == "open" and spans:
                spans[-1][1] = end + cooldown
            else:
                spans.append([end, end + cooldown])
        elif after == "closed" and before != "closed" and spans:
            spans[-1][1] = min(spans[-1][1], end)
    return {name: [(a, b) for a, b in spans] for name, spans in windows.items() if spans}


def budget_tokens(results: Iterable[ToolResult], budget: Any) -> list[tuple[float, int]]:
    """The retry budget's tokens over time, replayed from the attempts: [(clock seconds, tokens)].

    Starts full (budget.capacity); each retry costs retry_cost (timeout_cost after a
    timeout), each successful call refunds success_refund, as RetryBudget does.
    """
    events = []
    for r in results:
        for a in r.trace:
            if a.wait_after > 0:
                events.append((a.end, -(budget.timeout_cost if a.code == "TIMEOUT" else budget.retry_cost)))
            elif a.outcome in ("ok", "partial"):
                events.append((a.end, budget.success_refund))
    tokens = budget.capacity
    points = [(min((t for t, _ in events), default=0.0), tokens)]
    for when, delta in sorted(events, key=lambda e: e[0]):
        tokens = min(budget.capacity, tokens + delta) if delta > 0 else tokens + delta
        points.append((when, tokens))
    return points


def _draw_breaker(ax: Any, results: list[ToolResult], breaker: Any) -> None:
    t0 = min((r.started_at for r in results), default=0.0)
    names = sorted({r.name for r in results})
    if breaker is not None:
        windows = breaker_windows(results, breaker.failure_threshold, breaker.cooldown)
        for y, name in enumerate(names):
            spans = [(a - t0, b - a) for a, b in windows.get(name, [])]
            if spans:
                ax.broken_barh(spans, (y - 0.3, 0.6), facecolors=OUTCOME_COLORS["retryable"], alpha=0.6,
                               gid="breaker-open")
    refused = [(r.started_at - t0, names.index(r.name)) for r in results if r.error_code == "CIRCUIT_OPEN"]
    if refused:
        ax.plot([x for x, _ in refused], [y for _, y in refused], "x", color=OUTCOME_COLORS["fatal"],
                markersize=4, label=f"熔断中被拒的调用（{len(refused)}）", gid="breaker-refused")
        ax.legend(loc="upper right", fontsize=7, frameon=False)
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel("时间（秒）")
    ax.set_title("熔断器打开的时段（由调用记录推算）" if breaker is not None else "熔断器拒绝的调用")


def _draw_budget(ax: Any, results: list[ToolResult], budget: Any) -> None:
    t0 = min((r.started_at for r in results), default=0.0)
    points = budget_tokens(results, budget)
    ax.step([t - t0 for t, _ in points], [v for _, v in points], where="post", color="#1d3557", gid="budget-tokens")
    ax.axhline(budget.capacity, color="#999999", linestyle="--", linewidth=1)
    ax.set_ylim(0, budget.capacity * 1.1)
    ax.set_xlabel("时间（秒）")
    ax.set_ylabel("剩余额度")
    ax.set_title(f"重试额度（由调用记录推算；被拒的重试 {budget.denied} 次）")


def call_stats(executor_or_results: Any) -> Figure:
    """Call statistics in four panels: calls per tool stacked by final status (success rate in
    the row label), the duration distribution, retries per call, and the error codes of
    every failed attempt (stacked by outcome: retryable, timeout, fatal, partial).

    executor_or_results: a ToolExecutor (per-tool counts come from get_summary(), which
    counts every call; the other panels from call_history) or an iterable of ToolResult.
    A third row appears when the run had them: the circuit breaker's open windows per
    tool and the retry budget's tokens over time. The executor keeps no history of
    either, so both are replayed from the results (breaker_windows, budget_tokens) and
    the titles say so; calls refused by an open breaker are marked from their results.
    Empty input (no calls yet): returns an empty-state figure (no error).
    Raises TypeError for anything else.
    """
    results, per_tool, executor = _results_and_summary(executor_or_results)
    if not per_tool:
        return _empty("还没有调用记录", "调用统计")
    breaker = getattr(executor, "breaker", None)
    budget = getattr(executor, "budget", None)
    fast_failed = [r for r in results if r.error_code == "CIRCUIT_OPEN"]
    extras = [name for name, present in (("breaker", breaker is not None or fast_failed),
                                         ("budget", budget is not None)) if present]
    with matplotlib.rc_context(_rc()):
        fig = _figure(5.2 + 2.0 * bool(extras))
        layout = [["tools", "durations"], ["retries", "errors"]]
        if extras:
            layout.append(extras if len(extras) == 2 else extras * 2)
        axes = fig.subplot_mosaic(layout)
        ax_tools, ax_dur, ax_retry, ax_err = (axes[k] for k in ("tools", "durations", "retries", "errors"))
        if "breaker" in axes:
            _draw_breaker(axes["breaker"], results, breaker)
        if "budget" in axes:
            _draw_budget(axes["budget"], results, budget)
        names = sorted(per_tool)
        left = [0] * len(names)
        for status, key in (("success", "success"), ("partial", "partial"), ("error", "failed")):
            widths = [per_tool[name][key] for name in names]
            ax_tools.barh(names, widths, left=left, color=STATUS_COLORS[status],
                          label=STATUS_LABELS[status] if any(widths) else "_nolegend_", gid=f"status-{status}")
            left = [a + b for a, b in zip(left, widths)]
        labels = []
        for name in names:
            counts = per_tool[name]
            rate = counts["success"] / counts["calls"] if counts["calls"] else 0.0
            labels.append(f"{name}\n成功率 {rate:.0%}")
        ax_tools.set_yticks(range(len(names)), labels)
        ax_tools.invert_yaxis()
        ax_tools.set_title("每个工具的调用数（按最终状态）")
        ax_tools.set_xlabel("调用次数")
        ax_tools.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=7, frameon=False)

        # rounded to the microsecond: 99.99999999999997 and 100.0 ms are one duration, and a range that
        # narrow would make numpy refuse to split it into bins
        durations = [round(r.duration_ms, 3) for r in results]
        if durations:
            low, high = min(durations), max(durations)
            span = (low - 0.5, high + 0.5) if high - low < 1e-3 else None
            ax_dur.hist(durations, bins=min(30, max(5, len(set(durations)))), range=span, color="#4c72b0",
                        gid="durations")
            ax_dur.axvline(median(durations), color="#1d3557", linestyle="--", linewidth=1,
                           label=f"中位数 {median(durations):.0f} ms")
            ax_dur.legend(fontsize=7, frameon=False)
        ax_dur.set_title("耗时分布（含重试与等待）")
        ax_dur.set_xlabel("耗时（毫秒）")
        ax_dur.set_ylabel("调用次数")

        retries = Counter(r.retries for r in results)
        xs = list(range(0, max(retries, default=0) + 1))
        ax_retry.bar(xs, [retries.get(x, 0) for x in xs], color="#6c8ebf", gid="retries")
        ax_retry.set_xticks(xs)
        ax_retry.set_title("每次调用的重试次数")
        ax_retry.set_xlabel("重试次数")
        ax_retry.set_ylabel("调用次数")

        codes = _error_codes(results)
        if codes:
            items = sorted(codes.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
            left_err = [0] * len(items)
            for key in ("retryable", "timeout", "fatal", "partial"):
                widths = [counts.get(key, 0) for _, counts in items]
                if any(widths):
                    ax_err.barh([code for code, _ in items], widths, left=left_err, color=OUTCOME_COLORS[key],
                                label=OUTCOME_LABELS[key], gid=f"errors-{key}")
                    left_err = [a + b for a, b in zip(left_err, widths)]
            ax_err.invert_yaxis()
            ax_err.legend(loc="lower right", fontsize=7, frameon=False)
        else:
            ax_err.text(0.5, 0.5, "没有失败的尝试", ha="center", va="center", transform=ax_err.transAxes)
        ax_err.set_title("错误类型（每次失败的尝试，含重试后成功的）")
        ax_err.set_xlabel("尝试次数")
        total = sum(c["calls"] for c in per_tool.values())
        ok = sum(c["success"] for c in per_tool.values())
        fig.suptitle(f"调用统计：{total} 次调用，成功率 {ok / total:.0%}", fontsize=10)
        return fig


# --- budget curve ---------------------------------------------------------------------------------

DEFAULT_SIZES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000)
_PRODUCTS = ("显示器", "键盘", "鼠标", "耳机", "笔记本电脑")


def sample_records(n: int) -> list[dict]:
    """`n` sales-like records (the same for the same n), as a query tool would return them."""
    return [{"order_id": i + 1, "date": f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
             "product": _PRODUCTS[i % len(_PRODUCTS)], "quantity": i % 7 + 1,
             "amount": round(99.5 + (i * 37) % 900, 2)} for i in range(n)]


def budget_curve(sizes: Iterable[int] | None = None, *, max_chars: int = 2000) -> Figure:
    """Input size (records, log x) vs the characters the model receives, log y.

    For each size n, `sample_records(n)` goes through
    `parse_tool_result(records, max_tokens=max_chars // 4)` (flat: at most the budget)
    and through the naive `json.dumps(records, indent=2)` (grows with the input).
    Raises ValueError for empty sizes, sizes < 1, or max_chars < 4.
    """
    from .parsing import CHARS_PER_TOKEN, parse_tool_result

    sizes = sorted(set(DEFAULT_SIZES if sizes is None else sizes))
    if not sizes or sizes[0] < 1:
        raise ValueError(f"sizes 需要至少一个 >= 1 的记录数，收到 {sizes}")
    if max_chars < CHARS_PER_TOKEN:
        raise ValueError(f"max_chars 至少为 {CHARS_PER_TOKEN}，收到 {max_chars}")
    ours, naive = [], []
    for n in sizes:
        records = sample_records(n)
        ours.append(len(parse_tool_result(records, max_tokens=max_chars // CHARS_PER_TOKEN)))
        naive.append(len(json.dumps(records, ensure_ascii=False, indent=2)))
    with matplotlib.rc_context(_rc()):
        fig = _figure(3.5)
        ax = fig.add_subplot()
        ax.plot(sizes, naive, "o-", color=OUTCOME_COLORS["retryable"], markersize=4,
                label="直接 json.dumps 全部", gid="naive")
        ax.plot(sizes, ours, "o-", color=OUTCOME_COLORS["ok"], markersize=4,
                label=f"parse_tool_result（max_tokens={max_chars // CHARS_PER_TOKEN}）", gid="budgeted")
        ax.axhline(max_chars, color="#999999", linestyle="--", linewidth=1,
                   label=f"预算 {max_chars // CHARS_PER_TOKEN} tokens ≈ {max_chars} 个英文字符（中文 1 字约 1 token）",
                   gid="budget")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # 1,000 rather than 10³: plainer to read, and no mathtext to lay out
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
            axis.set_minor_formatter(NullFormatter())
        ax.annotate(f"{naive[-1]:,} 字符", (sizes[-1], naive[-1]), textcoords="offset points", xytext=(-8, -2),
                    ha="right", va="top", fontsize=8, color=OUTCOME_COLORS["retryable"], gid="naive-last")
        ax.annotate(f"{ours[-1]:,} 字符", (sizes[-1], ours[-1]), textcoords="offset points", xytext=(-4, 6),
                    ha="right", va="bottom", fontsize=8, color=OUTCOME_COLORS["ok"], gid="budgeted-last")
        ax.set_xlabel("工具返回的记录数（对数）")
        ax.set_ylabel("模型收到的字符数（对数）")
        ax.set_title("输入越大，直接塞给模型的越多；按预算解析则保持平坦")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        return fig


# --- truncation map ---------------------------------------------------------------------------------

def truncation_parts(text: str, result: str) -> dict[str, int]:
    """How `result` (a truncation of `text`) splits `text`: head kept, cut, tail kept, marker added.

    smart_truncate's marker ("…（已省略 N 字符）…") is recognised and its N checked;
    any other cut is measured as the longest common prefix and suffix.
    """
    import re

    if not isinstance(text, str) or not isinstance(result, str):
        raise TypeError(f"truncation_map 需要两个字符串（原文和截断结果），收到 {type(text).__name__} 和 "
                        f"{type(result).__name__}")
    if result == text:
        return {"head": len(text), "cut": 0, "tail": 0, "added": 0, "total": len(text), "result": len(result)}
    match = re.search(r"\n\n…（已省略 (\d+) 字符）…\n\n", result)
    if match:
        head, tail = result[:match.start()], result[match.end():]
        if (text.startswith(head) and text.endswith(tail)
                and len(text) - len(head) - len(tail) == int(match.group(1))):
            return {"head": len(head), "cut": int(match.group(1)), "tail": len(tail),
                    "added": match.end() - match.start(), "total": len(text), "result": len(result)}
    limit = min(len(text), len(result))
    head = 0
    while head < limit and text[head] == result[head]:
        head += 1
    tail = 0
    while tail < limit - head and text[-1 - tail] == result[-1 - tail]:
        tail += 1
    return {"head": head, "cut": len(text) - head - tail, "tail": tail, "added": len(result) - head - tail,
            "total": len(text), "result": len(result)}


def truncation_map(text: str, result: str) -> Figure:
    """A bar as long as `text`: the head kept, the part cut, the tail kept, with exact counts.

    `result` is what smart_truncate (or any truncation) returned for `text`.
    Raises ValueError for an empty `text`, TypeError when either is not a str.
    """
    parts = truncation_parts(text, result)
    if not text:
        raise ValueError("原文为空，没有可画的截断")
    segments = [("head", "保留开头", OUTCOME_COLORS["ok"]), ("cut", "省略", "#c9c9c9"),
                ("tail", "保留结尾", "#4c72b0")]
    with matplotlib.rc_context(_rc()):
        fig = _figure(2.4)
        ax = fig.add_subplot()
        left = 0
        for key, label, color in segments:
            width = parts[key]
            if width:
                ax.barh([0], [width], left=left, height=0.6, color=color, label=f"{label} {width:,} 字符",
                        hatch="//" if key == "cut" else None, edgecolor="white", gid=f"segment-{key}")
                if width / parts["total"] > 0.08:
                    ax.text(left + width / 2, 0, f"{label}\n{width:,}", ha="center", va="center", fontsize=8,
                            color="black" if key == "cut" else "white")
            left += width
        ax.set_xlim(0, parts["total"])
        ax.set_ylim(-0.45, 1.0)
        ax.set_yticks([])
        ax.set_xlabel("原文中的位置（字符）")
        kept = parts["head"] + parts["tail"]
        ax.set_title(f"原文 {parts['total']:,} 字符 → 给模型 {parts['result']:,} 字符"
                     f"（保留 {kept:,}，省略 {parts['cut']:,}，标记 {parts['added']:,}）")
        ax.legend(loc="upper center", ncol=3, fontsize=8, frameon=False)
        return fig


# --- live charts: the failure panel's two figures, redrawn in place ----------------------------------

_LIVE_RC = {"axes.titley": 1.0}  # a title at a fixed height: matplotlib need not measure what is under it


def _rect(fig: Figure, left: float, bottom: float, width: float, height: float) -> tuple[float, ...]:
    """An axes rectangle given in inches from the figure's bottom-left corner, as figure fractions."""
    w, h = fig.get_size_inches()
    return (left / w, bottom / h, width / w, height / h)


def _boxes(spans: Iterable[tuple[float, float, float, float]]) -> list:
    """Rectangles (x, y, width, height) as PolyCollection vertices."""
    return [[(x, y), (x + w, y), (x + w, y + h), (x, y + h)] for x, y, w, h in spans]


def _stacked(collections: dict[str, PolyCollection], categories: list[str], counts: dict[str, Counter | dict],
             keys: Sequence[str]) -> float:
    """Horizontal bars, one row per category, stacked in `keys` order; returns the longest bar."""
    left = [0.0] * len(categories)
    for key in keys:
        spans = []
        for y, category in enumerate(categories):
            width = counts[category].get(key, 0)
            if width:
                spans.append((left[y], y - 0.35, width, 0.7))
                left[y] += width
        collections[key].set_verts(_boxes(spans))
    return max(left, default=0.0)


def _pin_labels(ax: Any, xlabel_in: float = 0.24, ylabel_in: float = 0.36) -> None:
    """Fixed places for the axis labels, in inches from the axes' edges: a label matplotlib places itself
    costs a measurement of every tick label on every draw. (Titles: axes.titley in _LIVE_RC.)"""
    width, height = ax.get_position().size * ax.get_figure().get_size_inches()
    ax.xaxis.set_label_coords(0.5, -xlabel_in / height)
    ax.yaxis.set_label_coords(-ylabel_in / width, 0.5)


def _count_axis(axis: Any) -> None:
    axis.set_major_locator(MaxNLocator(nbins=4, integer=True))


class LiveCharts:
    """The failure panel's retry timeline and call statistics, kept between runs and redrawn in place.

    `retry_timeline` and `call_stats` build a new figure each call and let matplotlib's
    constrained layout fit it: right for a notebook cell, but on a small machine the pair
    costs about a second, mostly laying out and rendering text. A live panel redraws the
    same two pictures again and again, so this keeps both figures, their axes and ticks,
    places the axes with fixed margins (sized for the labels the panel can produce),
    leaves the colour key to the panel's HTML (a legend costs more to draw than the data),
    and per run only swaps the data of its artists. Same data, same PNG bytes, new
    figures or reused ones.

    `draw(executor)` returns {"timeline", "stats"} PNG bytes; `figures` holds the two
    ChartFigures (artists keep the gids of the notebook charts: "attempts-<outcome>",
    "waits", "retry-after-waits", "status-<status>", "errors-<outcome>", "durations",
    "retries"). The stats figure is rebuilt only when its shape changes (a breaker or a
    retry budget appears or goes); the timeline grows with the number of calls.
    Not thread-safe: one panel draws one batch at a time.
    """

    def __init__(self, dpi: int = DPI) -> None:
        self.dpi = dpi
        self.figures: dict[str, Figure] = {}
        self._timeline: dict[str, Any] = {}
        self._stats: dict[str, Any] = {}
        self._stats_shape: tuple | None = None

    def draw(self, executor: Any) -> dict[str, bytes]:
        """Redraw both figures for `executor`'s history; returns their PNG bytes."""
        with matplotlib.rc_context({**_rc(), **_LIVE_RC}):
            self._draw_timeline(list(executor.call_history))
            self._draw_stats(executor)
            return {name: self._png(fig) for name, fig in self.figures.items()}

    def _png(self, fig: Figure) -> bytes:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=self.dpi, metadata={"Software": None})
        return buffer.getvalue()

    def _new_figure(self, height: float) -> Figure:
        """A figure with its own Agg canvas: savefig then keeps one renderer, and with it matplotlib's
        cache of text sizes, from one redraw to the next (a bare Figure gets a new canvas per savefig)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = ChartFigure(figsize=(WIDTH, height), dpi=self.dpi)
        FigureCanvasAgg(fig)
        return fig

    # the timeline: one row per call, numbered in the order they finished
    def _timeline_figure(self) -> dict[str, Any]:
        fig = self._new_figure(4.0)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        parts: dict[str, Any] = {"fig": fig, "ax": ax, "texts": []}
        for key, color in OUTCOME_COLORS.items():
            parts[key] = ax.add_collection(PolyCollection([], facecolors=color, edgecolors="white", linewidths=0.4,
                                                          gid=f"attempts-{key}"))
        parts["waits"] = ax.add_collection(LineCollection([], colors=WAIT_COLOR, linestyles=":", linewidths=1.2,
                                                           gid="waits"))
        parts["limited"] = ax.add_collection(LineCollection([], colors=RETRY_AFTER_COLOR, linestyles="--",
                                                            linewidths=1.2, gid="retry-after-waits"))
        parts["hints"] = ax.add_collection(LineCollection([], colors=RETRY_AFTER_COLOR, linewidths=1.5,
                                                          gid="retry-after-marks"))
        parts["skipped"], = ax.plot([], [], "x", color="#555555", markersize=5, gid="not-run")
        ax.set_xlabel("时间（秒，从第一次尝试算起）")
        ax.set_ylabel("调用（按完成顺序）")
        ax.grid(axis="x", alpha=0.3)
        self.figures["timeline"] = fig
        return parts

    def _draw_timeline(self, results: list[ToolResult]) -> None:
        parts = self._timeline or self._timeline_figure()
        self._timeline = parts
        fig, ax = parts["fig"], parts["ax"]
        for text in parts.pop("texts"):
            text.remove()
        parts["texts"] = []
        rows = _rows(results)
        n = max(len(rows), 1)
        height = min(max(2.4, 0.9 + 0.22 * min(n, 20) + 0.03 * max(n - 20, 0)), 6.4)  # room for wait labels
        fig.set_size_inches(WIDTH, height)
        ax.set_position(_rect(fig, 0.75, 0.5, WIDTH - 0.95, height - 0.85))
        _pin_labels(ax, ylabel_in=0.45)
        if not rows:
            for key in OUTCOME_COLORS:
                parts[key].set_verts([])
            for key in ("waits", "limited", "hints"):
                parts[key].set_segments([])
            parts["skipped"].set_data([], [])
            ax.set(xlim=(0, 1), ylim=(0.5, -0.5), yticks=[])
            ax.set_title("重试时间线：还没有调用记录")
            return
        geo = _TimelineGeometry(rows)
        for key in OUTCOME_COLORS:
            parts[key].set_verts(geo.boxes[key])
        parts["waits"].set_segments(geo.wait_lines)
        parts["limited"].set_segments(geo.retry_after_lines)
        parts["hints"].set_segments(geo.hint_marks)
        parts["skipped"].set_data(*geo.skipped_xy())
        if len(rows) <= 20:
            parts["texts"] = _label_waits(ax, geo)
        ax.set_xlim(-geo.span * 0.01, geo.span * 1.03)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100) if len(rows) / s <= 8)
        ticks = [0] + list(range(step - 1, len(rows), step))
        ax.set_yticks(ticks, [str(i + 1) for i in ticks])
        ax.set_title(f"重试时间线：{len(rows)} 次调用，{geo.attempt_count} 次尝试", loc="left")

    # the statistics: final status and error codes on the left, durations and retries on the right
    def _stats_figure(self, shape: tuple[str, ...]) -> dict[str, Any]:
        row_h, extra_h, top = 1.35, 1.25, 0.55
        height = top + 2 * (row_h + 0.75) + (extra_h + 0.75 if shape else 0) + 0.05
        fig = self._new_figure(height)
        wide, narrow = (1.25, 2.65), (4.55, 3.3)  # (left, width) in inches: category labels need room
        y_top = height - top - row_h
        y_bottom = y_top - 0.75 - row_h
        axes = {"tools": fig.add_axes(_rect(fig, wide[0], y_top, wide[1], row_h)),
                "errors": fig.add_axes(_rect(fig, wide[0], y_bottom, wide[1], row_h)),
                "durations": fig.add_axes(_rect(fig, narrow[0], y_top, narrow[1], row_h)),
                "retries": fig.add_axes(_rect(fig, narrow[0], y_bottom, narrow[1], row_h))}
        y_extra = y_bottom - 0.75 - extra_h
        if len(shape) == 2:
            axes["breaker"] = fig.add_axes(_rect(fig, wide[0], y_extra, wide[1], extra_h))
            axes["budget"] = fig.add_axes(_rect(fig, narrow[0], y_extra, narrow[1], extra_h))
        elif shape:
            axes[shape[0]] = fig.add_axes(_rect(fig, wide[0], y_extra, WIDTH - wide[0] - 0.2, extra_h))
        parts: dict[str, Any] = {"fig": fig, "axes": axes}
        ax = axes["tools"]
        parts["status"] = {s: ax.add_collection(PolyCollection([], facecolors=STATUS_COLORS[s], gid=f"status-{s}"))
                           for s in STATUS_COLORS}
        ax.set_title("每个工具的调用（按最终状态）", loc="left")
        ax.set_xlabel("调用次数")
        _count_axis(ax.xaxis)
        ax = axes["errors"]
        parts["errors"] = {k: ax.add_collection(PolyCollection([], facecolors=OUTCOME_COLORS[k], gid=f"errors-{k}"))
                           for k in ("retryable", "timeout", "fatal", "partial")}
        parts["no_errors"] = ax.text(0.5, 0.5, "没有失败的尝试", ha="center", va="center", transform=ax.transAxes)
        ax.set_title("失败的尝试（按错误码）", loc="left")
        ax.set_xlabel("尝试次数")
        _count_axis(ax.xaxis)
        ax = axes["durations"]
        parts["durations"] = ax.add_collection(PolyCollection([], facecolors="#4c72b0", gid="durations"))
        parts["median"] = ax.axvline(0, color="#1d3557", linestyle="--", linewidth=1, gid="median")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.set_xlabel("耗时（毫秒，含重试与等待）")
        ax.set_ylabel("调用次数")
        _count_axis(ax.yaxis)
        ax = axes["retries"]
        parts["retries"] = ax.add_collection(PolyCollection([], facecolors="#6c8ebf", gid="retries"))
        ax.set_title("每次调用的重试次数", loc="left")
        ax.set_xlabel("重试次数")
        ax.set_ylabel("调用次数")
        _count_axis(ax.yaxis)
        if "breaker" in axes:
            ax = axes["breaker"]
            parts["breaker"] = ax.add_collection(PolyCollection([], facecolors=OUTCOME_COLORS["retryable"],
                                                                alpha=0.6, gid="breaker-open"))
            parts["refused"], = ax.plot([], [], "x", color=OUTCOME_COLORS["fatal"], markersize=4,
                                        gid="breaker-refused")
            ax.set_title("熔断器打开的时段（x：熔断中被拒的调用）", loc="left")
            ax.set_xlabel("时间（秒）")
        if "budget" in axes:
            ax = axes["budget"]
            parts["tokens"], = ax.plot([], [], drawstyle="steps-post", color="#1d3557", gid="budget-tokens")
            parts["capacity"] = ax.axhline(0, color="#999999", linestyle="--", linewidth=1)
            ax.set_xlabel("时间（秒）")
            ax.set_ylabel("剩余额度")
        for ax in axes.values():
            ax.grid(axis="x" if ax in (axes["tools"], axes["errors"]) else "y", alpha=0.3)
            _pin_labels(ax)
        self.figures["stats"] = fig
        return parts

    def _draw_stats(self, executor: Any) -> None:
        results, per_tool, _ = _results_and_summary(executor)
        breaker = getattr(executor, "breaker", None)
        budget = getattr(executor, "budget", None)
        fast_failed = any(r.error_code == "CIRCUIT_OPEN" for r in results)
        shape = tuple(name for name, present in (("breaker", breaker is not None or fast_failed),
                                                 ("budget", budget is not None)) if present)
        if shape != self._stats_shape or not self._stats:
            self._stats, self._stats_shape = self._stats_figure(shape), shape
        parts, axes = self._stats, self._stats["axes"]
        total = sum(c["calls"] for c in per_tool.values())
        ok = sum(c["success"] for c in per_tool.values())
        parts["fig"].suptitle(f"调用统计：{total} 次调用，成功率 {ok / total:.0%}" if total else "调用统计：还没有调用记录",
                              x=0.02, ha="left", fontsize=10)

        names = sorted(per_tool)
        by_status = {name: {"success": c["success"], "partial": c["partial"], "error": c["failed"]}
                     for name, c in per_tool.items()}
        longest = _stacked(parts["status"], names, by_status, ("success", "partial", "error"))
        labels = [f"{name}\n成功率 {per_tool[name]['success'] / per_tool[name]['calls']:.0%}" for name in names]
        axes["tools"].set_yticks(range(len(names)), labels)
        axes["tools"].set(xlim=(0, max(longest, 1) * 1.05), ylim=(max(len(names), 1) - 0.5, -0.5))

        codes = _error_codes(results)
        order = sorted(codes, key=lambda code: (-sum(codes[code].values()), code))
        longest = _stacked(parts["errors"], order, codes, ("retryable", "timeout", "fatal", "partial"))
        parts["no_errors"].set_visible(not order)
        axes["errors"].set_yticks(range(len(order)), order)
        axes["errors"].set(xlim=(0, max(longest, 1) * 1.05), ylim=(max(len(order), 1) - 0.5, -0.5))

        durations = [round(r.duration_ms, 3) for r in results]  # see call_stats: one duration, not two
        if durations:
            low, high = min(durations), max(durations)
            span = (low - 0.5, high + 0.5) if high - low < 1e-3 else (low, high)
            counts, edges = np.histogram(durations, bins=min(30, max(5, len(set(durations)))), range=span)
            parts["durations"].set_verts(_boxes((edges[i], 0, edges[i + 1] - edges[i], c)
                                                for i, c in enumerate(counts) if c))
            middle = median(durations)
            parts["median"].set_xdata([middle, middle])
            axes["durations"].set(xlim=(edges[0], edges[-1]), ylim=(0, max(counts) * 1.1))
            axes["durations"].set_title(f"耗时分布（中位数 {middle:.0f} ms）", loc="left")
        else:
            parts["durations"].set_verts([])
            axes["durations"].set_title("耗时分布", loc="left")

        retries = Counter(r.retries for r in results)
        top = max(retries, default=0)
        parts["retries"].set_verts(_boxes((x - 0.4, 0, 0.8, retries[x]) for x in range(top + 1) if retries[x]))
        axes["retries"].set_xticks(range(top + 1))
        axes["retries"].set(xlim=(-0.6, top + 0.6), ylim=(0, max(retries.values(), default=1) * 1.1))

        t0 = min((r.started_at for r in results), default=0.0)
        end = max((r.started_at + r.duration_ms / 1000 for r in results), default=t0 + 1) - t0
        if "breaker" in axes:
            tools = sorted({r.name for r in results})
            windows = breaker_windows(results, breaker.failure_threshold, breaker.cooldown) if breaker else {}
            parts["breaker"].set_verts(_boxes((a - t0, y - 0.3, b - a, 0.6) for y, name in enumerate(tools)
                                              for a, b in windows.get(name, [])))
            refused = [(r.started_at - t0, tools.index(r.name)) for r in results if r.error_code == "CIRCUIT_OPEN"]
            parts["refused"].set_data([x for x, _ in refused], [y for _, y in refused])
            axes["breaker"].set_yticks(range(len(tools)), tools)
            axes["breaker"].set(xlim=(0, max(end, 1e-3) * 1.02), ylim=(max(len(tools), 1) - 0.5, -0.5))
        if "budget" in axes:
            points = budget_tokens(results, budget)
            parts["tokens"].set_data([t - t0 for t, _ in points], [v for _, v in points])
            parts["capacity"].set_ydata([budget.capacity, budget.capacity])
            axes["budget"].set(xlim=(0, max(end, 1e-3) * 1.02), ylim=(0, budget.capacity * 1.1))
            axes["budget"].set_title(f"重试额度（被拒的重试 {budget.denied} 次）", loc="left")
