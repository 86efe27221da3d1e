"""A long run's context size, turn by turn: what the model was sent before each of its calls, with and without
clearing old tool results (chapter 10, bench row 10)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import matplotlib
from matplotlib.figure import Figure

from .style import OUTCOME_COLORS, WIDTH, new_figure, pin_labels, place, rc

__all__ = ["context_growth", "context_sizes"]

_COLORS = (OUTCOME_COLORS["retryable"], OUTCOME_COLORS["ok"], "#4c72b0", "#8172b2")


def context_sizes(run: Any) -> list[int]:
    """The characters the model was sent at each of its calls: an AgentRun's model steps ("context_chars")."""
    return [int(step["context_chars"]) for step in run.transcript
            if step.get("kind") == "model" and "context_chars" in step]


def context_growth(runs: Mapping[str, Any], *, budget: int | None = None) -> Figure:
    """One line per run (label -> AgentRun, or the sizes themselves): context characters over the model's turns.

    budget: draws the clearing budget for tool results as a dashed line. Raises ValueError when no run has a
    size to draw.
    """
    series = {label: (list(run) if isinstance(run, Sequence) else context_sizes(run)) for label, run in runs.items()}
    if not any(series.values()):
        raise ValueError("没有可画的运行：每个运行至少要有一次模型调用的 context_chars")
    fig = new_figure(3.4)
    with matplotlib.rc_context(rc()):
        ax = fig.add_axes((0, 0, 1, 1))
        place(ax, 1.0, 0.55, WIDTH - 1.2, 3.4 - 0.95)
        pin_labels(ax, xlabel_in=0.34, ylabel_in=0.8)
        for (label, sizes), color in zip(series.items(), _COLORS):
            turns = range(1, len(sizes) + 1)
            ax.plot(turns, sizes, "o-", color=color, markersize=3, linewidth=1.5, label=label, gid=f"run-{label}")
            if sizes:
                ax.annotate(f"{sizes[-1]:,}", (len(sizes), sizes[-1]), textcoords="offset points", xytext=(4, 0),
                            va="center", fontsize=8, color=color)
        if budget is not None:
            ax.axhline(budget, color="#999999", linestyle="--", linewidth=1, label=f"工具结果的预算 {budget:,} 字符",
                       gid="budget")
        ax.set_xlabel("第几次调用模型")
        ax.set_ylabel("发给模型的字符数")
        ax.set_title("长任务里，每一轮都把全部历史再发一遍：不清除就一路上涨", loc="left")
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    return fig
