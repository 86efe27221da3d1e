"""Charts of what the toolkit recorded: retry timelines, backoff, the thundering herd, call statistics.

Every chart function takes the toolkit's own records (`ToolResult.trace` / `Attempt`,
`RetryOutcome`, `ToolExecutor.call_history`, the ToolEvents a hook collected,
`Backoff.schedule()`, `smart_truncate`'s parts) and returns a `matplotlib.figure.Figure`:

* it never calls `plt.show()` and never leaves a figure in pyplot's list: it is a
  `ChartFigure` (a Figure with `_repr_png_`), so a notebook shows it once, when it is
  the cell's last expression (or with `display(fig)`), whatever the backend, and a
  widget can save it as PNG;
* axes, titles and keys are in Chinese; the same data draws the same picture (same PNG
  bytes with the Agg backend; for SVG set rcParams["svg.hashsalt"] and pass
  metadata={"Date": None} to savefig);
* sizes are modest (8 inches wide, 90 dpi) so stored notebook outputs stay small;
* the layout is fixed (see toolkit.viz.style): drawing a chart draws it once.

The two pictures the failure panel redraws on every Run, the retry timeline and the
call statistics, are classes (`TimelineChart`, `CallStatsChart`) built once and
updated with records; `retry_timeline(records)` and `call_stats(records)` are one build
and one update, and `LiveCharts` keeps one of each between Runs.

Importing this module registers the shipped CJK font (toolkit.viz.style); importing
`toolkit` alone never loads matplotlib.
"""
from __future__ import annotations

from .budget import budget_curve, sample_records, truncation_map, truncation_parts
from .context import context_growth, context_sizes
from .live import LiveCharts
from .records import attempt_outcome, call_outcome
from .retries import backoff_strategies, thundering_herd
from .style import (DEADLINE_COLOR, DPI, INSTANT_LABEL, JITTER_LABELS, JITTER_MODES, NOT_RUN, NOT_RUN_COLOR,
                    NOT_RUN_LABEL, OUTCOME_COLORS, OUTCOME_LABELS, RETRY_AFTER_COLOR, SHIPPED_FAMILY, SHIPPED_FONT,
                    SYSTEM_CJK_FAMILIES, WAIT_COLOR, WIDTH, ChartFigure, font_family, setup_fonts)
from .stats import CallStatsChart, breaker_windows, budget_tokens, call_stats
from .timeline import TimelineChart, retry_timeline

__all__ = [
    "context_growth", "context_sizes", "retry_timeline", "TimelineChart", "call_stats", "CallStatsChart", "LiveCharts", "breaker_windows",
    "budget_tokens", "backoff_strategies", "thundering_herd", "budget_curve", "truncation_map", "truncation_parts",
    "sample_records", "attempt_outcome", "call_outcome", "setup_fonts", "font_family",
    "ChartFigure", "OUTCOME_COLORS", "OUTCOME_LABELS", "NOT_RUN", "NOT_RUN_COLOR", "NOT_RUN_LABEL", "INSTANT_LABEL",
    "JITTER_MODES", "JITTER_LABELS", "WAIT_COLOR", "RETRY_AFTER_COLOR", "DEADLINE_COLOR", "SHIPPED_FONT",
    "SHIPPED_FAMILY", "SYSTEM_CJK_FAMILIES", "DPI", "WIDTH",
]

setup_fonts()
