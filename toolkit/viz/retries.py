"""Backoff pictures: the four jitter modes' waits over many seeds, and the thundering herd's arrivals."""
from __future__ import annotations

from statistics import median

import matplotlib
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from ..backoff import Backoff
from ..simulation import herd_arrivals, herd_histogram
from .style import DEADLINE_COLOR, JITTER_LABELS, JITTER_MODES, WIDTH, new_figure, pin_labels, place, rc

__all__ = ["backoff_strategies", "thundering_herd"]


def backoff_strategies(retries: int = 5, *, base: float = 1.0, cap: float = 30.0, seeds: int = 200,
                       factor: float = 2.0) -> Figure:
    """The four jitter modes side by side: the wait before each retry over `seeds` seeds.

    Each panel shows every seed's waits (faint dots), the median (line) and the ceiling
    min(cap, base·factor^n) (dashed), for `Backoff(base, factor, cap, jitter=mode).schedule(retries, seed)`
    with seed = 0..seeds-1. Raises ValueError for retries < 1 or seeds < 1.
    """
    if retries < 1 or seeds < 1:
        raise ValueError(f"retries 和 seeds 至少为 1，收到 retries={retries}, seeds={seeds}")
    height = 3.5
    fig = new_figure(height)
    left, gap, right = 0.6, 0.12, 0.15
    width = (WIDTH - left - right - 3 * gap) / 4
    xs = list(range(1, retries + 1))
    with matplotlib.rc_context(rc()):
        axes = []
        for i, mode in enumerate(JITTER_MODES):
            ax = fig.add_axes((0, 0, 1, 1), sharey=axes[0] if axes else None)
            place(ax, left + i * (width + gap), 0.5, width, height - 1.05)
            pin_labels(ax, xlabel_in=0.3, ylabel_in=0.38)
            policy = Backoff(base=base, factor=factor, cap=cap, jitter=mode)
            schedules = [policy.schedule(retries, seed=s) for s in range(seeds)]
            dots_x = np.array([x + (((s * 7919) % 101) / 100 - 0.5) * 0.35 for s in range(seeds) for x in xs])
            dots_y = np.array([w for sched in schedules for w in sched])
            ax.scatter(dots_x, dots_y, s=3, alpha=0.25, color="#4c72b0", linewidths=0, gid="seed-waits")
            medians = [median(sched[i] for sched in schedules) for i in range(retries)]
            ax.plot(xs, medians, "o-", color="#1d3557", markersize=3, linewidth=1.5, label="中位数", gid="median")
            ax.plot(xs, [policy.ceiling(i) for i in range(retries)], "--", color="#999999", linewidth=1,
                    label="上限 min(cap, base·2^n)", gid="ceiling")
            ax.set_title(JITTER_LABELS[mode], fontsize=9, loc="left")
            ax.set_xticks(xs)
            ax.set_xlabel("第几次重试")
            ax.grid(alpha=0.3)
            if axes:
                ax.tick_params(labelleft=False)
            axes.append(ax)
        axes[0].yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=5))
        axes[0].set_ylabel("等待（秒）")
        axes[0].legend(loc="upper left", fontsize=7, frameon=False)
        fig.suptitle(f"四种抖动方式的退避等待（{seeds} 个随机种子，base={base:g}s，cap={cap:g}s）", fontsize=10,
                     x=0.02, y=1 - 0.08 / height, ha="left", va="top")
    return fig


def thundering_herd(clients: int = 100, *, retries: int = 4, bin_ms: int = 100, seed: int = 0,
                    base: float = 1.0, cap: float = 30.0) -> Figure:
    """N clients fail at t=0; retry arrivals per `bin_ms` window, one panel per jitter mode.

    Each panel is a histogram (its total is clients × retries) with the peak load
    printed (the numbers toolkit.simulation.herd_peaks returns). Raises ValueError for
    clients, retries or bin_ms < 1.
    """
    if bin_ms <= 0:
        raise ValueError(f"bin_ms 必须大于 0，收到 {bin_ms}")
    arrivals = herd_arrivals(clients, retries=retries, seed=seed, base=base, cap=cap)
    width = bin_ms / 1000.0
    end = max(t for times in arrivals.values() for t in times)
    height = 4.6
    fig = new_figure(height)
    left, top, bottom, gap = 1.15, 0.42, 0.55, 0.08
    row_h = (height - top - bottom - 3 * gap) / 4
    with matplotlib.rc_context(rc()):
        axes = []
        for i, mode in enumerate(JITTER_MODES):
            ax = fig.add_axes((0, 0, 1, 1), sharex=axes[0] if axes else None)
            place(ax, left, height - top - (i + 1) * row_h - i * gap, WIDTH - left - 0.15, row_h)
            counts = herd_histogram(arrivals[mode], bin_ms)
            edges = [i * width for i in range(len(counts) + 1)]
            ax.stairs(counts, edges, fill=True, color="#4c72b0", gid=f"herd-{mode}")
            peak = max(counts)
            ax.text(0.995, 0.9, f"峰值 {peak} 次/{bin_ms} ms", transform=ax.transAxes, ha="right", va="top",
                    fontsize=8, color=DEADLINE_COLOR if peak >= clients / 2 else "#1d3557", gid="peak")
            ax.set_ylim(0, peak * 1.25 + 1)
            ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=2, integer=True))
            ax.set_ylabel(JITTER_LABELS[mode].split()[0], rotation=0, ha="right", va="center", fontsize=8)
            ax.yaxis.set_label_coords(-0.45 / (WIDTH - left - 0.15), 0.5)
            ax.grid(axis="x", alpha=0.3)
            if i < 3:
                ax.tick_params(labelbottom=False)
            axes.append(ax)
        axes[-1].set_xlim(0, end * 1.02 + width)
        axes[-1].set_xlabel(f"时间（秒）；纵轴：每 {bin_ms} 毫秒到达的重试次数")
        axes[-1].xaxis.set_label_coords(0.5, -0.32 / row_h)
        fig.suptitle(f"惊群：{clients} 个客户端在 t=0 同时失败，之后每人重试 {retries} 次", fontsize=10,
                     x=0.02, y=1 - 0.08 / height, ha="left", va="top")
    return fig
