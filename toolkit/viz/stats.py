"""Call statistics: how each tool's calls ended, the failed attempts by code, durations, retries,
and, when the run had them, the circuit breaker's open windows and the retry budget's tokens.

`CallStatsChart` builds the figure once and `update(records, events)` swaps its data
(it rebuilds its axes only when a breaker or budget row appears or goes);
`call_stats(records)` is one build and one update. The breaker's and the budget's
pictures are drawn from the ToolEvents they emitted (`breaker_state`,
`breaker_reject`, `budget_*`), which a hook collects:
`ToolExecutor(hooks=[events.append])`, then `call_stats(executor, events=events)`.

What is counted where: a call the open breaker refused (or the argument check
refused) never ran, so it is no attempt: it is a grey "未执行" part of its tool's bar
and an x in the breaker row, and stays out of the failed attempts, the durations and
the retries, whose titles count attempts the same way the failure panel's summary does.
"""
from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any, Iterable

import matplotlib
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..hooks import ToolEvent
from ..results import ErrorCode
from .records import CallRecords, attempt_outcome, call_outcome, call_records
from .style import (BIG_SCALE, BIG_WIDTH, NOT_RUN, NOT_RUN_COLOR, NOT_RUN_LABEL, OUTCOME_COLORS, OUTCOME_LABELS,
                    WIDTH, code_label, empty_state, finite, font_pt, new_figure, pin_labels, place, rc, text_inches)

__all__ = ["CallStatsChart", "call_stats", "breaker_windows", "budget_tokens"]

CALL_KEYS = ("ok", "partial", "retryable", "timeout", "fatal", NOT_RUN)   # how a call ended
ATTEMPT_KEYS = ("retryable", "timeout", "fatal", "partial")             # how a failed attempt ended
COLORS = {**OUTCOME_COLORS, NOT_RUN: NOT_RUN_COLOR}
LABELS = {**OUTCOME_LABELS, NOT_RUN: NOT_RUN_LABEL}
_ROW_H, _GAP, _EXTRA_H = 1.35, 0.78, 1.2   # inches: a row of panels, the room under it, the breaker/budget row
_RIGHT_COLUMN = (4.75, 3.1)                 # (left, width) of the right-hand panels
BIG_ROW_H, _BIG_GAP = 1.05, 0.7             # presentation mode: a row's plot, the room under it (times BIG_SCALE)


def _boxes(spans: Iterable[tuple[float, float, float, float]]) -> list:
    """Rectangles (x, y, width, height) as PolyCollection vertices."""
    return [[(x, y), (x + w, y), (x + w, y + h), (x, y + h)] for x, y, w, h in spans]


def _stacked(collections: dict[str, PolyCollection], counts: list[Counter], keys: Iterable[str]) -> float:
    """Horizontal bars, one row per Counter, stacked in `keys` order; returns the longest bar."""
    left = [0.0] * len(counts)
    for key in keys:
        spans = []
        for y, count in enumerate(counts):
            if count.get(key):
                spans.append((left[y], y - 0.35, count[key], 0.7))
                left[y] += count[key]
        collections[key].set_verts(_boxes(spans))
        collections[key].set_visible(bool(spans))  # an empty artist still costs a draw call
    return max(left, default=0.0)


def breaker_windows(events: Iterable[ToolEvent]) -> dict[str, list[tuple[float, float, str]]]:
    """When each tool's circuit was not closed, from the breaker's events: {tool: [(start, end, state)]}.

    state "open" (calls refused) lasts until the next change of that tool's circuit, at most its
    cool-down (after it, the next call is let through as the trial); "half_open" lasts while the trial
    runs. A window still open at the last event ends after its cool-down.
    """
    changes = sorted((e for e in events if e.kind == "breaker_state" and finite(e.time)), key=lambda e: e.time)
    windows: dict[str, list[tuple[float, float, str]]] = {}
    last: dict[str, ToolEvent] = {}
    for event in changes:
        before = last.get(event.tool)
        if before is not None and before.state != "closed":
            _close(windows, before, event.time)
        last[event.tool] = event
    for event in last.values():
        if event.state != "closed":
            _close(windows, event, event.time + (event.wait if finite(event.wait) else 0.0))
    return windows


def _close(windows: dict, opened: ToolEvent, until: float) -> None:
    end = min(until, opened.time + opened.wait) if opened.state == "open" and finite(opened.wait) else until
    windows.setdefault(opened.tool, []).append((opened.time, max(end, opened.time), opened.state))


def budget_tokens(events: Iterable[ToolEvent], capacity: int | None = None) -> list[tuple[float, int]]:
    """The retry budget's tokens over time, from its events: [(clock seconds, tokens left)].

    Starts at `capacity` (or, unknown, at what the first event had before it) at the first event's time.
    """
    points: list[tuple[float, int]] = []
    for e in sorted((e for e in events if e.kind in ("budget_withdraw", "budget_refund") and finite(e.time)
                     and e.tokens is not None), key=lambda e: e.time):
        if not points:
            before = capacity if capacity is not None else e.tokens + (e.cost if e.kind == "budget_withdraw"
                                                                       else -e.cost)
            points.append((e.time, before))
        points.append((e.time, e.tokens))
    return points


class CallStatsChart:
    """The call statistics kept between updates (see the module doc).

    legend: one colour key under the title (a notebook chart); the failure panel shows
    its key as HTML instead. Artists carry gids: "calls-<outcome>" (outcome: ok,
    partial, retryable, timeout, fatal, not_run), "errors-<outcome>", "durations",
    "median", "retries", "breaker-open", "breaker-trial", "breaker-refused",
    "budget-tokens", "budget-denied". big: presentation mode (toolkit.viz.style.font_pt): larger
    text in a BIG_WIDTH-inch figure, its rows no taller than their text needs.
    """

    def __init__(self, *, legend: bool = True, dpi: int = 90, big: bool = False) -> None:
        self.legend, self.big = legend, big
        self.width, self.k = (BIG_WIDTH, BIG_SCALE) if big else (WIDTH, 1.0)  # k: the margins around text
        self.figure: Figure = new_figure(5.0, width=self.width, dpi=dpi, big=big)
        self.figure.empty_state = True
        self.shape: tuple[str, ...] | None = None
        self.axes: dict[str, Any] = {}
        self.parts: dict[str, Any] = {}

    # building: the axes and artists of one shape (which extra panels there are)
    def _build(self, shape: tuple[str, ...]) -> None:
        fig = self.figure
        fig.clear()
        self.shape = shape
        names = ["tools", "durations", "errors", "retries", *shape]
        axes = self.axes = {name: fig.add_axes((0, 0, 1, 1)) for name in names}
        parts = self.parts = {}
        ax = axes["tools"]
        parts["calls"] = {k: ax.add_collection(PolyCollection([], facecolors=COLORS[k], gid=f"calls-{k}"))
                          for k in CALL_KEYS}
        ax.set_xlabel("调用次数")
        ax = axes["errors"]
        parts["errors"] = {k: ax.add_collection(PolyCollection([], facecolors=COLORS[k], gid=f"errors-{k}"))
                           for k in ATTEMPT_KEYS}
        parts["no_errors"] = ax.text(0.5, 0.5, "没有失败的尝试", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel("尝试次数")
        ax = axes["durations"]
        parts["durations"] = ax.add_collection(PolyCollection([], facecolors="#4c72b0", gid="durations"))
        parts["median"] = ax.axvline(0, color="#1d3557", linestyle="--", linewidth=1, gid="median")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.set_xlabel("耗时（毫秒，含重试与等待）")
        ax = axes["retries"]
        parts["retries"] = ax.add_collection(PolyCollection([], facecolors="#6c8ebf", gid="retries"))
        ax.set_xlabel("重试次数")
        for name in ("durations", "retries"):
            axes[name].set_ylabel("调用次数")
            axes[name].yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        for name in ("tools", "errors"):
            axes[name].xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        if "breaker" in axes:
            ax = axes["breaker"]
            parts["open"] = ax.add_collection(PolyCollection([], facecolors=OUTCOME_COLORS["retryable"], alpha=0.6,
                                                             gid="breaker-open"))
            parts["trial"] = ax.add_collection(PolyCollection([], facecolors=OUTCOME_COLORS["partial"], alpha=0.6,
                                                              gid="breaker-trial"))
            parts["refused"], = ax.plot([], [], "x", color=NOT_RUN_COLOR, markersize=5, markeredgewidth=1.2,
                                        gid="breaker-refused")
            ax.set_xlabel("时间（秒）")
        if "budget" in axes:
            ax = axes["budget"]
            parts["tokens"], = ax.plot([], [], drawstyle="steps-post", color="#1d3557", gid="budget-tokens")
            parts["denied"], = ax.plot([], [], "x", color=OUTCOME_COLORS["fatal"], markersize=5, gid="budget-denied")
            parts["capacity"] = ax.axhline(0, color="#999999", linestyle="--", linewidth=1)
            ax.set_xlabel("时间（秒）")
            ax.set_ylabel("剩余额度")
        for name, ax in axes.items():
            ax.grid(axis="x" if name in ("tools", "errors", "breaker") else "y", alpha=0.3)

    def _place(self, left: float, title_lines: int) -> None:
        """The figure's size and the axes rectangles in inches; `left` is the left column's label margin."""
        k = self.k
        self._top = (0.12 + 0.25 * title_lines + (0.3 if self.legend else 0) + 0.3) * k  # title, key, panels' titles
        if self.big:
            self._place_grid(left)
            return
        height = self._top + 2 * (_ROW_H + _GAP) + (_EXTRA_H + _GAP if self.shape else 0)
        self.figure.set_size_inches(WIDTH, height)
        axes = self.axes
        y_top = height - self._top - _ROW_H
        y_bottom = y_top - _GAP - _ROW_H
        width = _RIGHT_COLUMN[0] - 0.75 - left
        for name, (x, w), y in (("tools", (left, width), y_top), ("errors", (left, width), y_bottom),
                                ("durations", _RIGHT_COLUMN, y_top), ("retries", _RIGHT_COLUMN, y_bottom)):
            place(axes[name], x, y, w, _ROW_H)
        y_extra = y_bottom - _GAP - _EXTRA_H
        if "breaker" in axes:
            full = "budget" not in axes
            place(axes["breaker"], left, y_extra, WIDTH - 0.2 - left if full else width, _EXTRA_H)
        if "budget" in axes:
            x, w = (left, WIDTH - 0.2 - left) if "breaker" not in axes else _RIGHT_COLUMN
            place(axes["budget"], x, y_extra, w, _EXTRA_H)
        for ax in axes.values():
            pin_labels(ax, xlabel_in=0.3, ylabel_in=0.5)

    def _place_grid(self, left: float) -> None:
        """Presentation mode: two rows of two panels in a BIG_WIDTH-inch figure, each row only as tall as its text
        needs (BIG_ROW_H), so the picture fits a 1920×1080 screen under the failure panel's scene buttons: how the
        calls ended and the failed attempts above, the breaker and the budget below when the run had them (the
        durations and the retries then stay out of this picture), else the durations and the retries."""
        k, width, axes = self.k, self.width, self.axes
        left = max(left, 0.75 * k)  # every panel's tick labels and y-axis title fit in it
        plot = (width - 0.2 - 0.15 - 2 * left) / 2
        columns = (left, 2 * left + plot + 0.15)
        gap = _BIG_GAP * k  # an x-axis label under a row and the next row's title
        height = self._top + 2 * BIG_ROW_H + gap + 0.45 * k
        self.figure.set_size_inches(width, height)
        y_top = height - self._top - BIG_ROW_H
        y_bottom = y_top - gap - BIG_ROW_H
        below = [name for name in ("breaker", "budget") if name in axes] or ["durations", "retries"]
        for name in ("durations", "retries"):
            axes[name].set_visible(name in below)
        place(axes["tools"], columns[0], y_top, plot, BIG_ROW_H)
        place(axes["errors"], columns[1], y_top, plot, BIG_ROW_H)
        if len(below) == 1:
            place(axes[below[0]], left, y_bottom, width - 0.2 - left, BIG_ROW_H)
        else:
            for name, x in zip(below, columns):
                place(axes[name], x, y_bottom, plot, BIG_ROW_H)
        for ax in axes.values():
            pin_labels(ax, xlabel_in=0.3 * k, ylabel_in=0.5 * k)

    # updating: the data of one run
    def update(self, records: Any, events: Iterable[ToolEvent] | None = None) -> "CallStatsChart":
        """Draw `records` (an executor, ToolResults, ToolEvents or CallRecords) and the collected `events`;
        returns self.

        Raises TypeError for records it does not know."""
        found = records if isinstance(records, CallRecords) else call_records(records, events)
        shape = tuple(name for name, present in (
            ("breaker", found.breaker is not None or bool(found.breaker_events) or bool(found.rejected)),
            ("budget", found.budget is not None or bool(found.budget_events))) if present)
        with matplotlib.rc_context({**rc(self.big), "axes.titlesize": font_pt(9, self.big)}):
            if shape != self.shape:
                self._build(shape)
            self._draw(found)
        return self

    def _draw(self, found: CallRecords) -> None:
        axes, parts, results = self.axes, self.parts, found.results
        ran = [r for r in results if call_outcome(r) != NOT_RUN]
        by_tool: dict[str, Counter] = {}
        for r in results:
            by_tool.setdefault(r.name, Counter())[call_outcome(r)] += 1
        names = sorted(by_tool)
        codes: dict[str, Counter] = {}
        for a in (a for r in results for a in r.trace):
            outcome = attempt_outcome(a)
            if outcome != "ok":
                code = "PARTIAL" if outcome == "partial" else str(a.error_code or ErrorCode.UNKNOWN)
                codes.setdefault(code, Counter())[outcome] += 1
        order = sorted(codes, key=lambda code: (-sum(codes[code].values()), code))
        labels = [f"{name}\n成功率 {by_tool[name]['ok'] / sum(by_tool[name].values()):.0%}" for name in names]
        code_names = [code_label(code) for code in order]
        left = max([0.8] + [text_inches(t, font_pt(8, self.big)) + 0.15 for t in labels + code_names])
        title = self._title(found, histograms=not (self.big and self.shape))
        self._place(min(left, 2.3 * self.k), title.count("\n") + 1)
        self.figure.suptitle(title, x=0.02, y=1 - 0.08 / self.figure.get_size_inches()[1], ha="left", va="top",
                             fontsize=font_pt(10, self.big), linespacing=1.5)
        self.figure.empty_state = not results

        ax = axes["tools"]
        longest = _stacked(parts["calls"], [by_tool[n] for n in names], CALL_KEYS)
        ax.set_yticks(range(len(names)), labels)
        ax.set(xlim=(0, max(longest, 1) * 1.05), ylim=(max(len(names), 1) - 0.5, -0.5))
        ax.set_title("每个工具的调用（按结局）", loc="left")

        ax = axes["errors"]
        failed = sum(sum(c.values()) for c in codes.values())
        longest = _stacked(parts["errors"], [codes[c] for c in order], ATTEMPT_KEYS)
        parts["no_errors"].set_visible(not order)
        ax.set_yticks(range(len(order)), code_names)
        ax.set(xlim=(0, max(longest, 1) * 1.05), ylim=(max(len(order), 1) - 0.5, -0.5))
        total = "" if self.big else f"（共 {found.attempts} 次尝试）"  # presentation mode: the figure's title says it
        ax.set_title(f"失败的尝试：{failed} 次{total}", loc="left")

        self._durations(ran)
        retries = Counter(r.retries for r in ran)
        top = max(retries, default=0)
        parts["retries"].set_verts(_boxes((x - 0.4, 0, 0.8, retries[x]) for x in range(top + 1) if retries[x]))
        axes["retries"].set_xticks(range(top + 1))
        axes["retries"].set(xlim=(-0.6, top + 0.6), ylim=(0, max(retries.values(), default=1) * 1.1))
        axes["retries"].set_title("每次调用的重试次数", loc="left")
        if "breaker" in axes or "budget" in axes:
            self._guards(found)
        if self.legend:
            self._key(by_tool, codes)

    @staticmethod
    def _title(found: CallRecords, histograms: bool = True) -> str:
        """The figure's title: what was counted, and on a second line what was left out or refused."""
        results = found.results
        if not results:
            text = "调用统计：还没有调用记录"
        else:
            ok = sum(1 for r in results if r.status == "success")
            text = f"调用统计：{len(results)} 次调用，成功率 {ok / len(results):.0%}，共 {found.attempts} 次尝试"
            if found.total_calls > len(results):
                text += f"（执行器共 {found.total_calls} 次调用，记录里只留了最近 {len(results)} 次）"
            notes = []
            if found.rejected:
                also = "，也不进耗时和重试两图" if histograms else ""  # presentation mode may leave those two out
                notes.append(f"熔断拦下 {len(found.rejected)} 次（未执行：不算尝试{also}）")
            denied = [e for e in found.budget_events if e.kind == "budget_deny"]
            if denied:
                notes.append(f"重试额度拒绝 {len(denied)} 次")
            if found.invalid:
                notes.append(f"{found.invalid} 次调用的时间不是有限数，没有画进耗时")
            if notes:
                text += "\n" + "；".join(notes)
        return text

    def _durations(self, ran: list) -> None:
        ax, parts = self.axes["durations"], self.parts
        # rounded to the microsecond: 99.99999999999997 and 100.0 ms are one duration, and a range that
        # narrow would make numpy refuse to split it into bins
        durations = [round(r.duration_ms, 3) for r in ran if finite(r.duration_ms)]
        if not durations:
            parts["durations"].set_verts([])
            parts["median"].set_visible(False)
            ax.set_title("耗时分布", loc="left")
            return
        low, high = min(durations), max(durations)
        span = (low - 0.5, high + 0.5) if high - low < 1e-3 else (low, high)
        counts, edges = np.histogram(durations, bins=min(30, max(5, len(set(durations)))), range=span)
        parts["durations"].set_verts(_boxes((edges[i], 0, edges[i + 1] - edges[i], c)
                                            for i, c in enumerate(counts) if c))
        middle = median(durations)
        parts["median"].set_xdata([middle, middle])
        parts["median"].set_visible(True)
        ax.set(xlim=(edges[0], edges[-1]), ylim=(0, max(counts) * 1.1))
        ax.set_title(f"耗时：中位数 {middle:.0f} ms" if self.big else f"耗时分布（虚线：中位数 {middle:.0f} ms）",
                     loc="left")

    def _guards(self, found: CallRecords) -> None:
        """The breaker's and the budget's rows, from their events, on the statistics' clock."""
        axes, parts = self.axes, self.parts
        starts = [r.started_at for r in found.results if finite(r.started_at)]
        times = [e.time for e in found.breaker_events + found.budget_events]
        t0 = min(starts + times, default=0.0)
        ends = [r.started_at + r.duration_ms / 1000 for r in found.results if finite(r.started_at, r.duration_ms)]
        end = max(ends + times, default=t0 + 1) - t0
        if "breaker" in axes:
            ax, events = axes["breaker"], found.breaker_events
            refused = [e for e in events if e.kind == "breaker_reject"]
            windows = breaker_windows(events)
            tools = sorted({r.name for r in found.results} | set(windows) | {e.tool for e in refused})
            rows = {name: y for y, name in enumerate(tools)}
            spans = [(a - t0, rows[name] - 0.3, b - a, 0.6, state) for name, spans in windows.items()
                     for a, b, state in spans]
            parts["open"].set_verts(_boxes(s[:4] for s in spans if s[4] == "open"))
            parts["trial"].set_verts(_boxes(s[:4] for s in spans if s[4] == "half_open"))
            if not events:  # no events collected: the refusals are still in the results
                refused_xy = [(r.started_at - t0, rows[r.name]) for r in found.rejected if finite(r.started_at)]
            else:
                refused_xy = [(e.time - t0, rows[e.tool]) for e in refused]
            parts["refused"].set_data([x for x, _ in refused_xy], [y for _, y in refused_xy])
            ax.set_yticks(range(len(tools)), tools)
            ax.set(xlim=(0, max(end, 1e-3) * 1.02), ylim=(max(len(tools), 1) - 0.5, -0.5))
            ax.set_title(f"熔断器：红=打开，黄=试探，x=拦下（{len(refused_xy)} 次）" if events else
                         f"熔断器：x=拦下（{len(refused_xy)} 次；开合要收集事件才画得出）", loc="left")
        if "budget" in axes:
            ax, events = axes["budget"], found.budget_events
            capacity = found.budget.capacity if found.budget is not None else None
            points = budget_tokens(events, capacity)
            denied = [(e.time - t0, e.tokens) for e in events if e.kind == "budget_deny"]
            parts["tokens"].set_data([t - t0 for t, _ in points], [v for _, v in points])
            parts["denied"].set_data([t for t, _ in denied], [v for _, v in denied])
            top = capacity if capacity is not None else max((v for _, v in points), default=1)
            parts["capacity"].set_ydata([top, top])
            ax.set(xlim=(0, max(end, 1e-3) * 1.02), ylim=(0, max(top, 1) * 1.1))
            ax.set_title(f"重试额度：x=被拒的重试（{len(denied)} 次）" if events or found.budget is None else
                         f"重试额度：剩 {found.budget.tokens}，拒 {found.budget.denied} 次（变化要收集事件）", loc="left")

    def _key(self, by_tool: dict[str, Counter], codes: dict[str, Counter]) -> None:
        for legend in list(self.figure.legends):
            legend.remove()
        present = {k for c in [*by_tool.values(), *codes.values()] for k, v in c.items() if v}
        keys = [k for k in CALL_KEYS if k in present]
        if keys:
            self.figure.legend([Patch(color=COLORS[k]) for k in keys], [LABELS[k] for k in keys], loc="upper left",
                               bbox_to_anchor=(0.015, 1 - (self._top - 0.55) / self.figure.get_size_inches()[1]),
                               ncol=len(keys),
                               frameon=False, fontsize=font_pt(8, self.big), handlelength=1.2, columnspacing=1.2)


def call_stats(executor_or_results: Any, *, events: Iterable[ToolEvent] | None = None) -> Figure:
    """Call statistics: how each tool's calls ended (success rate in the row label), the failed
    attempts by error code (stacked by outcome), the durations and the retries per call.

    executor_or_results: a ToolExecutor (its call_history), a ToolResult, or an iterable of
    ToolResult or of ToolEvent (the finished calls are drawn, and the events are used as
    below). events: the ToolEvents a hook collected during the run. A third row appears when
    the run had a circuit breaker or a retry budget: its open windows and refused calls, its
    tokens over time, both drawn from their events (without events, the refused calls and
    the budget's final count are shown, and the titles say so).
    Empty input (no calls yet): returns an empty-state figure (no error).
    Raises TypeError for anything else.
    """
    found = call_records(executor_or_results, events)
    if not found.results:
        return empty_state("还没有调用记录", "调用统计")
    return CallStatsChart().update(found).figure
