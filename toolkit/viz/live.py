"""The failure panel's two pictures, kept between Runs: the same charts as a notebook's, updated in place."""
from __future__ import annotations

import io
from typing import Any, Iterable

from matplotlib.figure import Figure

from ..hooks import ToolEvent
from .stats import CallStatsChart
from .style import DPI
from .timeline import TimelineChart

__all__ = ["LiveCharts"]


class LiveCharts:
    """The retry timeline and the call statistics of the failure panel, kept between runs.

    It keeps one `TimelineChart` and one `CallStatsChart` (the builders the notebook's
    `retry_timeline` and `call_stats` use, so the two show the same pictures) and on each
    run only updates their data and encodes them. The colour key is the panel's HTML
    (`toolkit.widgets.colour_key`), not a legend drawn into every redraw. Same data,
    same PNG bytes, new charts or reused ones. Not thread-safe: one panel draws one
    batch at a time.

    `draw(executor, events)` returns {"timeline", "stats"} PNG bytes; `figures` holds
    the two figures.
    """

    def __init__(self, dpi: int = DPI) -> None:
        self.dpi = dpi
        self.timeline = TimelineChart(legend=False, dpi=dpi)
        self.stats = CallStatsChart(legend=False, dpi=dpi)
        self.figures: dict[str, Figure] = {"timeline": self.timeline.figure, "stats": self.stats.figure}

    def draw(self, executor: Any, events: Iterable[ToolEvent] | None = None) -> dict[str, bytes]:
        """Redraw both figures for `executor`'s history (and the `events` a hook collected during the
        run: the breaker's and the budget's); returns their PNG bytes."""
        self.timeline.update(executor)
        self.stats.update(executor, events)
        return {name: self._png(fig) for name, fig in self.figures.items()}

    def _png(self, fig: Figure) -> bytes:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=self.dpi, metadata={"Software": None})
        return buffer.getvalue()
