"""The retry timeline: one row per call, one bar per attempt coloured by outcome, waits as labelled gaps.

`TimelineChart` builds the figure once and `update(records)` swaps its data; the
notebook function `retry_timeline(records)` is one build and one update, and the
failure panel's `LiveCharts` keeps one TimelineChart and updates it on every Run.
"""
from __future__ import annotations

import math
from typing import Any

import matplotlib
import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..results import ErrorCode
from .records import Rows, attempt_outcome, timeline_rows
from .style import (DEADLINE_COLOR, INSTANT_LABEL, NOT_RUN_COLOR, NOT_RUN_LABEL, OUTCOME_COLORS, OUTCOME_LABELS,
                    RETRY_AFTER_COLOR, WAIT_COLOR, WIDTH, BIG_SCALE, BIG_WIDTH, code_label, fmt_seconds, font_pt,
                    new_figure, pin_labels, place, rc, text_inches)

__all__ = ["TimelineChart", "retry_timeline", "BIG_TALLEST", "Y_LABEL"]

LABELLED_ROWS = 20    # up to this many rows every row is named and every wait labelled with its length;
                      # past it, at most nine rows are numbered (a tick label costs a text to lay out and draw)
INSTANT_PX = 3.0      # an attempt narrower than this many pixels is drawn as a dot
BIG_TALLEST = 3.3     # inches, presentation mode with max_rows or past LABELLED_ROWS rows: shown ~830 px wide on a
                      # 1280×800 laptop (BIG_WIDTH inches), 455 px tall, under the scene buttons and summary in a
                      # ~675 px notebook; 550 px tall where it is shown 1000 px wide (1920×1080)
_TOP, _BOTTOM, _RIGHT = 0.42, 0.5, 0.15  # inches around the axes
_TITLE_LINE = 0.24                       # inches: a second line of the title (what a row limit left out)
Y_LABEL = "调用（编号）"
_LEGEND_FONT = 7
_KEY_LABELS = (*OUTCOME_LABELS.values(), "退避等待", "按 Retry-After 等待", INSTANT_LABEL, NOT_RUN_LABEL, "总时限 100s")


class TimelineChart:
    """A retry timeline kept between updates.

    legend: draw the colour key beside the axes (a notebook chart); the failure panel
    shows its key as HTML instead (`toolkit.widgets.colour_key`). deadline: seconds
    from the batch's first attempt, a red dashed line. title: replaces the default
    title (which counts calls and attempts). Artists carry gids: "attempts-<outcome>",
    "instant-attempts", "waits", "retry-after-waits", "not-run", "deadline",
    "wait-label", "not-run-label". big: presentation mode (toolkit.viz.style.font_pt): larger text in
    a BIG_WIDTH-inch figure. max_rows: past this many calls, draw only max_rows of those worth looking at
    (retried, not successful or never run; spread evenly over them; the first calls if none is), rows
    numbered, no text over the bars, tall enough to read from the back of a room; the title says so.
    """

    def __init__(self, *, legend: bool = True, deadline: float | None = None, title: str | None = None,
                 dpi: int = 90, big: bool = False, max_rows: int | None = None) -> None:
        self.legend, self.deadline, self.title, self.big, self.max_rows = legend, deadline, title, big, max_rows
        self.width, self.k = (BIG_WIDTH, BIG_SCALE) if big else (WIDTH, 1.0)  # k: the margins around text
        self.figure: Figure = new_figure(3.0, width=self.width, dpi=dpi, big=big)
        self.figure.empty_state = True
        with matplotlib.rc_context(rc(big)):
            ax = self.ax = self.figure.add_axes((0, 0, 1, 1))
            ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
            self.boxes = {key: ax.add_collection(PolyCollection([], facecolors=color, edgecolors="white",
                                                                linewidths=0.4, gid=f"attempts-{key}"))
                          for key, color in OUTCOME_COLORS.items()}
            self.instants = ax.scatter([], [], s=22 * self.k ** 2, marker="o", edgecolors="#333333", linewidths=0.5,
                                       zorder=3, gid="instant-attempts")
            self.waits = ax.add_collection(LineCollection([], colors=WAIT_COLOR, linestyles=":", linewidths=1.2,
                                                          gid="waits"))
            self.limited = ax.add_collection(LineCollection([], colors=RETRY_AFTER_COLOR, linestyles="--",
                                                            linewidths=1.2, gid="retry-after-waits"))
            self.not_run, = ax.plot([], [], "x", color=NOT_RUN_COLOR, markersize=(5 if big else 6) * self.k,
                                    markeredgewidth=1.5, gid="not-run")
            self.deadline_line = ax.axvline(deadline or 0.0, color=DEADLINE_COLOR, linestyle="--", linewidth=1.2,
                                            gid="deadline", visible=deadline is not None)
            ax.set_xlabel("时间（秒，从第一次尝试算起）")
            ax.set_ylabel(Y_LABEL)
            ax.grid(axis="x", alpha=0.3)
            self.message = ax.text(0.5, 0.5, "", ha="center", va="center", transform=ax.transAxes, color="#555555",
                                   fontsize=font_pt(11, big))
        self.texts: list = []
        self._label_ends: dict[int, float] = {}  # per row: where the last wait label above the line ends

    def update(self, records: Any, *, min_span: float = 0.0) -> "TimelineChart":
        """Draw `records` (see toolkit.viz.records.timeline_rows for what it accepts); returns self.
        min_span: the time axis spans at least this many seconds (runs to compare can share one axis).

        Raises TypeError for records it does not know."""
        rows = timeline_rows(records)
        with matplotlib.rc_context(rc(self.big)):
            self._draw(rows, min_span if math.isfinite(min_span) else 0.0)
        return self

    def _shown(self, rows: list) -> tuple[list, str]:
        """The rows to draw and, when max_rows left some out, which ones the picture holds: of the calls worth
        looking at (retried, not successful, never run), max_rows spread evenly over them, in their order."""
        limit = self.max_rows
        if limit is None or len(rows) <= limit:
            return rows, ""
        eventful = [r for r in rows if len(r.trace) != 1 or attempt_outcome(r.trace[0]) != "ok"]
        if len(eventful) <= limit:
            return eventful or rows[:limit], (f"（只画有重试、没成功或未执行的 {len(eventful)} 次）" if eventful
                                             else f"（只画前 {limit} 次）")
        picked = [eventful[i * len(eventful) // limit] for i in range(limit)]
        return picked, f"（有重试、没成功或未执行的 {len(eventful)} 次里，均匀取 {limit} 次）"

    def _draw(self, found: Rows, min_span: float = 0.0) -> None:
        ax, k, width = self.ax, self.k, self.width
        rows, left_out = self._shown(found.rows)
        top, bottom, right_margin = (_TOP + (_TITLE_LINE if left_out else 0)) * k, _BOTTOM * k, _RIGHT
        if self.big:  # no more room above the axes than the title's lines take: the chart shares a laptop's screen
            top = 0.16 + (2 if left_out else 1) * font_pt(10, True) / 72 * 1.25
        for text in self.texts:
            text.remove()
        self.texts = []
        n = len(rows)
        named = n <= LABELLED_ROWS and not self.max_rows  # a limited picture: numbers, no text over the bars
        if n <= LABELLED_ROWS:
            ticks, labels = list(range(n)), [row.label if named else row.label.split(".")[0] for row in rows]
        else:
            step = next(s for s in (2, 5, 10, 20, 25, 50, 100, 200, 500) if n / s <= 8)
            ticks = [0] + list(range(step - 1, n, step))
            labels = [str(i + 1) for i in ticks]
        size = font_pt(8 if n <= LABELLED_ROWS else 6, self.big)
        tick_in = max(0.25, text_inches(max(labels, key=len, default=""), size) + 0.1)
        left = tick_in + 0.3 * k  # the tick labels, then the axis title
        ylabel_in = tick_in + 0.08 * k
        rows_h = (0.26 * min(n, LABELLED_ROWS) + 0.03 * max(min(n, 100) - LABELLED_ROWS, 0)) * k if n else 1.0
        # presentation mode: past LABELLED_ROWS rows are thin bars, and the whole chart fits on a laptop's screen
        # under the failure panel's scene buttons (BIG_TALLEST)
        tallest = BIG_TALLEST if self.big and (n > LABELLED_ROWS or self.max_rows) else 6.4 * k
        height = min(max(top + bottom + rows_h, 2.0), tallest)
        self.figure.set_size_inches(width, height)
        self.figure.empty_state = not n
        self.message.set_text("" if n else "还没有调用记录")
        if not n:
            place(ax, left, bottom, width - left - right_margin, height - top - bottom)
            pin_labels(ax, xlabel_in=0.3 * k, ylabel_in=ylabel_in)
            self._clear()
            ax.set(xlim=(0, 1), ylim=(0.5, -0.5), yticks=[])
            note = f"（{found.invalid} 条记录的时间不是有限数，未画出）" if found.invalid else ""
            ax.set_title((self.title or "重试时间线：还没有调用记录") + note, loc="left")
            self._set_legend([])
            return
        t0 = min(r.start for r in found.rows)  # the batch's first attempt, also when max_rows left it out
        end = max([a.end + (a.wait_after if a.wait_after > 0 and math.isfinite(a.wait_after) else 0)
                   for r in rows for a in r.trace] + [r.start for r in rows])
        deadline = self.deadline if self.deadline is not None and math.isfinite(self.deadline) else 0.0
        span = max(end - t0, deadline, min_span, 1e-3)
        # what counts as too short for a bar does not depend on whether a key sits beside the axes
        widest_key = max(text_inches(label, font_pt(_LEGEND_FONT, self.big)) for label in _KEY_LABELS) + 0.55 * k
        axes_px = (width - left - right_margin - widest_key) * self.figure.dpi
        instant = span * INSTANT_PX / max(axes_px, 1.0)
        boxes: dict[str, list] = {key: [] for key in OUTCOME_COLORS}
        # a few pixels a row past LABELLED_ROWS: bars fill more of it, and no white edge eats their colour
        dense = n > LABELLED_ROWS
        half = 0.42 if dense else 0.3
        for collection in self.boxes.values():
            collection.set_linewidth(0.0 if dense else 0.4)
        dots, dot_colors, waits, limited, skipped = [], [], [], [], []
        self._label_ends = {}
        for y, row in enumerate(rows):
            for a in row.trace:
                x0, x1, kind = a.start - t0, a.end - t0, attempt_outcome(a)
                if x1 - x0 < instant:  # an attempt that took (almost) no time stays visible, as a dot
                    dots.append((x0, y))
                    dot_colors.append(OUTCOME_COLORS[kind])
                else:
                    boxes[kind].append([(x0, y - half), (x1, y - half), (x1, y + half), (x0, y + half)])
                if a.wait_after > 0 and math.isfinite(a.wait_after):
                    after_429 = a.error_code == ErrorCode.RATE_LIMITED
                    (limited if after_429 else waits).append([(x1, y), (x1 + a.wait_after, y)])
                    if named:
                        self._label_wait(x1 + a.wait_after / 2, y, a.wait_after, after_429, span / axes_px)
            if not row.trace:
                skipped.append((row.start - t0, y))
                if named:
                    self.texts.append(ax.text(row.start - t0, y, f" {code_label(row.note)}", va="center",
                                              fontsize=font_pt(7, self.big),
                                              color="#555555", gid="not-run-label"))
        keys = self._legend_entries(found, bool(dots)) if self.legend else []
        right = right_margin + (max(text_inches(label, font_pt(_LEGEND_FONT, self.big)) for _, label in keys)
                                + 0.55 * k if keys else 0)
        place(ax, left, bottom, width - left - right, height - top - bottom)
        pin_labels(ax, xlabel_in=0.3 * k, ylabel_in=ylabel_in)
        for key, polys in boxes.items():
            self.boxes[key].set_verts(polys)
            self.boxes[key].set_visible(bool(polys))  # an empty artist still costs a draw call
        self.instants.set_offsets(np.array(dots, dtype=float).reshape(-1, 2))
        self.instants.set_facecolors(dot_colors or "none")
        self.waits.set_segments(waits)
        self.limited.set_segments(limited)
        self.not_run.set_data([x for x, _ in skipped], [y for _, y in skipped])
        for artist, data in ((self.instants, dots), (self.waits, waits), (self.limited, limited),
                             (self.not_run, skipped)):
            artist.set_visible(bool(data))
        if self.deadline is not None:
            self.deadline_line.set_xdata([self.deadline, self.deadline])
        ax.set_xlim(-span * 0.01, span * 1.03)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_yticks(ticks, labels, fontsize=size)
        title = self.title or f"重试时间线：{len(found.rows)} 次调用，{found.attempts} 次尝试"
        if not self.title and any(not r.trace for r in found.rows):
            title += f"，{sum(1 for r in found.rows if not r.trace)} 次未执行"
        if left_out:
            title += "\n" + left_out
        if found.invalid:
            title += f"（{found.invalid} 条记录的时间不是有限数，未画出）"
        ax.set_title(title, loc="left")
        self._set_legend(keys)

    def _label_wait(self, x: float, y: int, wait: float, after_429: bool, per_px: float) -> None:
        """The wait's length over its middle; a label that would run into the row's previous one goes
        under the line instead."""
        text = fmt_seconds(wait) + (" Retry-After" if after_429 else "")
        half = text_inches(text, font_pt(7, self.big)) * self.figure.dpi * per_px / 2
        below = x - half < self._label_ends.get(y, -math.inf)
        if not below:
            self._label_ends[y] = x + half
        backing = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.6}  # readable over a bar
        self.texts.append(self.ax.text(x, y + 0.08 if below else y - 0.08, text, ha="center",
                                       va="top" if below else "bottom", fontsize=font_pt(7, self.big), bbox=backing,
                                       gid="wait-label",
                                       color=RETRY_AFTER_COLOR if after_429 else WAIT_COLOR))

    def _clear(self) -> None:
        for collection in self.boxes.values():
            collection.set_verts([])
        self.instants.set_offsets(np.empty((0, 2)))
        self.waits.set_segments([])
        self.limited.set_segments([])
        self.not_run.set_data([], [])

    def _legend_entries(self, found: Rows, dots: bool) -> list[tuple[Any, str]]:
        """(handle, label) for what this picture holds, in a fixed order."""
        attempts = [a for r in found.rows for a in r.trace]
        kinds = {attempt_outcome(a) for a in attempts}
        entries: list[tuple[Any, str]] = [(Patch(color=OUTCOME_COLORS[k]), OUTCOME_LABELS[k])
                                          for k in OUTCOME_COLORS if k in kinds]
        waits = [a for a in attempts if a.wait_after > 0 and math.isfinite(a.wait_after)]
        if any(a.error_code != ErrorCode.RATE_LIMITED for a in waits):
            entries.append((Line2D([], [], color=WAIT_COLOR, linestyle=":", linewidth=1.2), "退避等待"))
        if any(a.error_code == ErrorCode.RATE_LIMITED for a in waits):
            entries.append((Line2D([], [], color=RETRY_AFTER_COLOR, linestyle="--", linewidth=1.2),
                            "按 Retry-After 等待"))
        if dots:
            entries.append((Line2D([], [], linestyle="", marker="o", markerfacecolor="white",
                                   markeredgecolor="#333333"), INSTANT_LABEL))
        if any(not r.trace for r in found.rows):
            entries.append((Line2D([], [], linestyle="", marker="x", color=NOT_RUN_COLOR, markeredgewidth=1.5),
                            NOT_RUN_LABEL))
        if self.deadline is not None:
            entries.append((Line2D([], [], color=DEADLINE_COLOR, linestyle="--"), f"总时限 {self.deadline:g}s"))
        return entries

    def _set_legend(self, entries: list[tuple[Any, str]]) -> None:
        old = self.ax.get_legend()
        if old is not None:
            old.remove()
        if entries:
            self.ax.legend([h for h, _ in entries], [label for _, label in entries], loc="upper left",
                           bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=font_pt(_LEGEND_FONT, self.big))


def retry_timeline(calls: Any, *, deadline: float | None = None, title: str | None = None) -> Figure:
    """One row per call, one bar per attempt coloured by outcome, waits drawn as labelled gaps.

    calls: a ToolResult, a RetryOutcome, a list of them (e.g. `executor.call_history`),
    an executor, one call's list of Attempt, a list of such lists, or the ToolEvents a
    hook collected (the finished calls are drawn: their "call_end" events carry the
    results). Times are clock seconds from the first attempt of the batch. Each attempt
    is a bar (colours: OUTCOME_COLORS); an attempt too short to see is a dot of its
    colour; each backoff wait is a dotted line across the gap with its length (a wait
    that followed a 429 is blue, dashed and marked Retry-After); `deadline` (seconds
    from the batch start) is a red dashed line. A call that never ran (circuit open,
    refused arguments) is an x with its code. Rows are in the order given
    (call_history is in order of completion). Waits are labelled when there are at
    most 20 rows; past 20 rows, a few rows are numbered instead of every row named. An attempt whose times are not
    finite numbers is left out, and the title says how many were.

    Empty input: returns an empty-state figure saying there are no calls (no error).
    Raises TypeError for records it does not know.
    """
    return TimelineChart(deadline=deadline, title=title).update(calls).figure
