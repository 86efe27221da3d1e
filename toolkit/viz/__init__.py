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

Importing this package registers the shipped CJK font (toolkit.viz.style) and loads
nothing else: each chart's module loads when one of its names is first used (PEP 562),
so `from toolkit.viz import truncation_map` does not import the retry charts (and with
them toolkit.simulation and the executor). Importing `toolkit` alone never loads matplotlib.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .style import (DEADLINE_COLOR, DPI, INSTANT_LABEL, JITTER_LABELS, JITTER_MODES, NOT_RUN, NOT_RUN_COLOR,
                    NOT_RUN_LABEL, OUTCOME_COLORS, OUTCOME_LABELS, RETRY_AFTER_COLOR, SHIPPED_FAMILY, SHIPPED_FONT,
                    SYSTEM_CJK_FAMILIES, WAIT_COLOR, WIDTH, ChartFigure, font_family, setup_fonts)

if TYPE_CHECKING:  # what __getattr__ hands out, for type checkers (and tests/test_architecture.py)
    from .budget import budget_curve, sample_records, truncation_map, truncation_parts
    from .context import context_growth, context_sizes
    from .live import LiveCharts
    from .records import attempt_outcome, call_outcome
    from .retries import backoff_strategies, thundering_herd
    from .stats import CallStatsChart, breaker_windows, budget_tokens, call_stats
    from .timeline import TimelineChart, retry_timeline

_LAZY = {
    "budget_curve": "budget", "sample_records": "budget", "truncation_map": "budget", "truncation_parts": "budget",
    "context_growth": "context", "context_sizes": "context",
    "LiveCharts": "live",
    "attempt_outcome": "records", "call_outcome": "records",
    "backoff_strategies": "retries", "thundering_herd": "retries",
    "CallStatsChart": "stats", "breaker_windows": "stats", "budget_tokens": "stats", "call_stats": "stats",
    "TimelineChart": "timeline", "retry_timeline": "timeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "context_growth", "context_sizes", "retry_timeline", "TimelineChart", "call_stats", "CallStatsChart", "LiveCharts",
    "breaker_windows",
    "budget_tokens", "backoff_strategies", "thundering_herd", "budget_curve", "truncation_map", "truncation_parts",
    "sample_records", "attempt_outcome", "call_outcome", "setup_fonts", "font_family",
    "ChartFigure", "OUTCOME_COLORS", "OUTCOME_LABELS", "NOT_RUN", "NOT_RUN_COLOR", "NOT_RUN_LABEL", "INSTANT_LABEL",
    "JITTER_MODES", "JITTER_LABELS", "WAIT_COLOR", "RETRY_AFTER_COLOR", "DEADLINE_COLOR", "SHIPPED_FONT",
    "SHIPPED_FAMILY", "SYSTEM_CJK_FAMILIES", "DPI", "WIDTH",
]

setup_fonts()
