"""What the model receives under a budget: the budget curve (input size vs characters sent) and the
truncation map (which part of a text was kept, which cut), with the sample records they use."""
from __future__ import annotations

import json
from typing import Any, Iterable

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullLocator

from ..parsing import CHARS_PER_TOKEN, parse_tool_result
from ..truncate import Truncation
from .style import OUTCOME_COLORS, WIDTH, new_figure, pin_labels, place, rc

__all__ = ["budget_curve", "truncation_map", "truncation_parts", "sample_records", "DEFAULT_SIZES"]

DEFAULT_SIZES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000)
_PRODUCTS = ("显示器", "键盘", "鼠标", "耳机", "笔记本电脑")


def sample_records(n: int) -> list[dict]:
    """`n` sales-like records (the same for the same n, each a prefix of a longer list), as a query tool
    would return them."""
    return [{"order_id": i + 1, "date": f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
             "product": _PRODUCTS[i % len(_PRODUCTS)], "quantity": i % 7 + 1,
             "amount": round(99.5 + (i * 37) % 900, 2)} for i in range(n)]


def _naive_chars(records: list[dict]) -> int:
    """len(json.dumps(records, ensure_ascii=False, indent=2)) for a non-empty list of flat records (as
    sample_records makes), counted without building that text.

    json.dumps with an indent runs in pure Python, about ten times slower than without; the indented
    text is the compact one plus its whitespace: a newline after "[" and before "]", one after each
    comma between records, and per record its indent, its braces' newlines and a newline and indent
    before each key.
    """
    compact = len(json.dumps(records, ensure_ascii=False, separators=(",", ": ")))
    keys = sum(len(r) for r in records)
    return compact + 2 + (len(records) - 1) + 10 * len(records) + 5 * (keys - len(records))


def budget_curve(sizes: Iterable[int] | None = None, *, max_chars: int = 2000) -> Figure:
    """Input size (records, log x) vs the characters the model receives, log y.

    For each size n, `sample_records(n)` goes through
    `parse_tool_result(records, max_tokens=max_chars // 4)` (flat: at most the budget)
    and through the naive `json.dumps(records, indent=2)` (grows with the input).
    Raises ValueError for empty sizes, sizes < 1, or max_chars < 4.
    """
    sizes = sorted(set(DEFAULT_SIZES if sizes is None else sizes))
    if not sizes or sizes[0] < 1:
        raise ValueError(f"sizes 需要至少一个 >= 1 的记录数，收到 {sizes}")
    if max_chars < CHARS_PER_TOKEN:
        raise ValueError(f"max_chars 至少为 {CHARS_PER_TOKEN}，收到 {max_chars}")
    everything = sample_records(sizes[-1])
    ours = [len(parse_tool_result(everything[:n], max_tokens=max_chars // CHARS_PER_TOKEN)) for n in sizes]
    naive = [_naive_chars(everything[:n]) for n in sizes]
    fig = new_figure(3.5)
    with matplotlib.rc_context(rc()):
        ax = fig.add_axes((0, 0, 1, 1))
        place(ax, 1.05, 0.55, WIDTH - 1.25, 3.5 - 0.95)
        pin_labels(ax, xlabel_in=0.34, ylabel_in=0.88)
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
            axis.set_minor_locator(NullLocator())  # a grid line per decade; minor ticks cost a tick object each
        ax.annotate(f"{naive[-1]:,} 字符", (sizes[-1], naive[-1]), textcoords="offset points", xytext=(-8, -2),
                    ha="right", va="top", fontsize=8, color=OUTCOME_COLORS["retryable"], gid="naive-last")
        ax.annotate(f"{ours[-1]:,} 字符", (sizes[-1], ours[-1]), textcoords="offset points", xytext=(-4, 6),
                    ha="right", va="bottom", fontsize=8, color=OUTCOME_COLORS["ok"], gid="budgeted-last")
        ax.set_xlabel("工具返回的记录数（对数）")
        ax.set_ylabel("模型收到的字符数（对数）")
        ax.set_title("输入越大，直接塞给模型的越多；按预算解析则保持平坦", loc="left")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    return fig


def truncation_parts(text: str, result: "str | Truncation") -> dict[str, int]:
    """How `result` (a cut of `text`) splits `text`: head kept, cut, tail kept, characters added.

    `result` is a `Truncation` (toolkit.truncate.truncate_parts: smart_truncate's cut in its
    parts, counted exactly) or any other cut as a str (measured as the longest common prefix
    and suffix; what is left of it counts as added). Raises TypeError for anything else.
    """
    if not isinstance(text, str) or not isinstance(result, (str, Truncation)):
        raise TypeError(f"truncation_map 需要原文（字符串）和截断结果（字符串或 truncate_parts 的结果），收到 "
                        f"{type(text).__name__} 和 {type(result).__name__}")
    if isinstance(result, Truncation):
        return {"head": len(result.head), "cut": result.omitted, "tail": len(result.tail),
                "added": len(result.marker), "total": len(text), "result": len(result.text)}
    if result == text:
        return {"head": len(text), "cut": 0, "tail": 0, "added": 0, "total": len(text), "result": len(result)}
    limit = min(len(text), len(result))
    head = 0
    while head < limit and text[head] == result[head]:
        head += 1
    tail = 0
    while tail < limit - head and text[-1 - tail] == result[-1 - tail]:
        tail += 1
    return {"head": head, "cut": len(text) - head - tail, "tail": tail, "added": len(result) - head - tail,
            "total": len(text), "result": len(result)}


def truncation_map(text: str, result: Any) -> Figure:
    """A bar as long as `text`: the head kept, the part cut, the tail kept, with exact counts.

    `result` is what a truncation returned for `text`: `truncate_parts(text, ...)` for
    smart_truncate's cut (its parts, exact), or the text any other cut returned.
    Raises ValueError for an empty `text`, TypeError when either is of another type.
    """
    parts = truncation_parts(text, result)
    if not text:
        raise ValueError("原文为空，没有可画的截断")
    segments = [("head", "保留开头", OUTCOME_COLORS["ok"]), ("cut", "省略", "#c9c9c9"),
                ("tail", "保留结尾", "#4c72b0")]
    fig = new_figure(2.4)
    with matplotlib.rc_context(rc()):
        ax = fig.add_axes((0, 0, 1, 1))
        place(ax, 0.25, 0.55, WIDTH - 0.5, 2.4 - 1.0)
        pin_labels(ax, xlabel_in=0.34)
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
                     f"（保留 {kept:,}，省略 {parts['cut']:,}，标记 {parts['added']:,}）", loc="left")
        ax.legend(loc="upper center", ncol=3, fontsize=8, frameon=False)
    return fig
