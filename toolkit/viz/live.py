"""The failure panel's two pictures, kept between Runs: the same charts as a notebook's, updated in place."""
from __future__ import annotations

import io
from typing import Any, Iterable

import matplotlib
from matplotlib.figure import Figure

from ..hooks import ToolEvent
from .stats import CallStatsChart
from .style import DPI
from .timeline import TimelineChart

__all__ = ["LiveCharts", "BIG_ROWS"]

BIG_ROWS = 12  # presentation mode's timeline: rows of about 25 px where the picture is 1000 px wide


class LiveCharts:
    """The retry timeline and the call statistics of the failure panel, kept between runs.

    It keeps one `TimelineChart` and one `CallStatsChart` (the builders the notebook's
    `retry_timeline` and `call_stats` use, so the two show the same pictures) and on each
    run only updates their data and encodes them. The colour key is the panel's HTML
    (`toolkit.widgets.colour_key`), not a legend drawn into every redraw. Same data,
    same PNG bytes, new charts or reused ones. Not thread-safe: one panel draws one
    batch at a time.

    `draw(executor, events)` returns {"timeline", "stats"} PNG bytes (`format` "png"), or SVG
    (`format` "svg": what presentation mode shows, sharp at any width and browser zoom, its text
    drawn as outlines so no font is needed where it is shown); `figures` holds the two figures.
    big: presentation mode's sizes (toolkit.viz.style.font_pt): larger text in a narrower figure, and a
    timeline of at most BIG_ROWS rows (the calls worth looking at, toolkit.viz.TimelineChart's max_rows).
    """

    def __init__(self, dpi: int = DPI, big: bool = False, format: str = "png") -> None:
        if format not in ("png", "svg"):
            raise ValueError(f"format must be 'png' or 'svg', got {format!r}")
        self.dpi, self.big, self.format = dpi, big, format
        self.timeline = TimelineChart(legend=False, dpi=dpi, big=big, max_rows=BIG_ROWS if big else None)
        self.stats = CallStatsChart(legend=False, dpi=dpi, big=big)
        self.figures: dict[str, Figure] = {"timeline": self.timeline.figure, "stats": self.stats.figure}

    def draw(self, executor: Any, events: Iterable[ToolEvent] | None = None, *,
             min_span: float = 0.0) -> dict[str, bytes]:
        """Redraw both figures for `executor`'s history (and the `events` a hook collected during the
        run: the breaker's and the budget's); returns their PNG bytes. min_span: the timeline's time axis
        spans at least this many seconds."""
        self.timeline.update(executor, min_span=min_span)
        self.stats.update(executor, events)
        return {name: self._encode(fig) for name, fig in self.figures.items()}

    def _encode(self, fig: Figure) -> bytes:
        buffer = io.BytesIO()
        if self.format == "svg":  # same data, same bytes: fixed ids, no date
            with matplotlib.rc_context({"svg.hashsalt": "toolkit", "svg.fonttype": "path"}):
                fig.savefig(buffer, format="svg", metadata={"Date": None})
        else:
            fig.savefig(buffer, format="png", dpi=self.dpi, metadata={"Software": None})
        return buffer.getvalue()
