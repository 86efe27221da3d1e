"""Row 2: parse_tool_result and smart_truncate as the input grows, next to the seed's naive cut.

Records: a list of small dicts (10^2 .. 10^6). Text: ASCII log lines, 1 KB ..
100 MB. The comparison is the original course code's approach: serialize everything
(json.dumps(..., ensure_ascii=False, indent=2)), then cut to max_tokens * 4
characters; for text, the seed's head + tail cut. Time is the median of
interleaved rounds; extra memory is the tracemalloc peak of one separate run
(tracing slows code down, so it is never on while timing).
"""
from __future__ import annotations

import json
import time
import tracemalloc
from typing import Any, Callable

from toolkit import parse_tool_result, smart_truncate

from ._stats import line, row, summarize, target

KEY = "parse"
TITLE = "parse_tool_result / smart_truncate 随输入增大"
EN = "parse_tool_result / smart_truncate vs input size"

MAX_TOKENS = 2000  # the original course code's default: about 8000 characters


def make_records(n: int) -> list[dict]:
    """n small sales records (distinct ids and amounts)."""
    return [{"id": i, "product": "显示器", "region": "华东", "amount": 1299.0 + i % 7} for i in range(n)]


def make_text(size: int) -> str:
    """About `size` characters of ASCII log lines (1 character = 1 byte)."""
    unit = "2026-05-01 12:00:00 INFO worker-3 processed order 12345 in 42 ms, status=ok\n"
    return (unit * (size // len(unit) + 1))[:size]


def naive_parse(result: Any, max_tokens: int = MAX_TOKENS) -> str:
    """The seed's approach for structured data: serialize all of it, then cut."""
    return json.dumps(result, ensure_ascii=False, indent=2)[: max_tokens * 4]


def naive_text(text: str, max_tokens: int = MAX_TOKENS) -> str:
    """The seed's head + tail cut for long text."""
    if len(text) <= max_tokens * 4:
        return text
    omitted = len(text) - max_tokens * 2 - 500
    return f"{text[:max_tokens * 2]}\n\n... (省略 {omitted} 字符) ...\n\n{text[-500:]}"


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Extra memory fn() needs at its peak (tracemalloc), beyond what was allocated before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return max(tracemalloc.get_traced_memory()[1] - base, 0)
    finally:
        tracemalloc.stop()


def time_rounds(contenders: dict[str, Callable[[], Any]], rounds: int, repeat: int = 1,
                limit: dict[str, int] | None = None) -> dict[str, list[float]]:
    """Seconds per call, rounds interleaved with rotating order; `limit` caps a slow contender's rounds."""
    limit = limit or {}
    names = list(contenders)
    out: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up, unrecorded (the slow ones are skipped)
        if limit.get(name, rounds) >= rounds:
            contenders[name]()
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            if r >= limit.get(name, rounds):
                continue
            t0 = time.perf_counter()
            for _ in range(repeat):
                contenders[name]()
            out[name].append((time.perf_counter() - t0) / repeat)
    return out


def _records_rows(sizes: list[int], rounds: int, naive_big: int) -> dict:
    table: dict[int, dict] = {}
    for n in sizes:
        records = make_records(n)
        contenders = {
            "parse": lambda: parse_tool_result(records, max_tokens=MAX_TOKENS),
            "parse_query": lambda: parse_tool_result(records, max_tokens=MAX_TOKENS, kind="query"),
            "naive": lambda: naive_parse(records),
        }
        big = n >= 100_000
        times = time_rounds(contenders, rounds, limit={"naive": naive_big} if big else None)
        table[n] = {name: {"time_ms": summarize([t * 1e3 for t in v]),
                           "peak_kb": peak_bytes(contenders[name]) / 1024}
                    for name, v in times.items()}
        del records, contenders
    return table


def _text_rows(sizes: list[int], rounds: int) -> dict:
    table: dict[int, dict] = {}
    for size in sizes:
        text = make_text(size)
        contenders = {
            "smart_truncate": lambda: smart_truncate(text),
            "parse": lambda: parse_tool_result(text, max_tokens=MAX_TOKENS),
            "naive": lambda: naive_text(text),
        }
        times = time_rounds(contenders, rounds, repeat=50)
        table[size] = {name: {"time_us": summarize([t * 1e6 for t in v]),
                              "peak_kb": peak_bytes(contenders[name]) / 1024}
                       for name, v in times.items()}
        del text, contenders
    return table


def _size_label(n: int) -> str:
    return f"10^{len(str(n)) - 1}"


def _bytes_label(size: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("KB", 1000)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def run(quick: bool = False) -> dict:
    """Measure row 2; returns the row dict (see _stats.row)."""
    if quick:
        rec_sizes, text_sizes, rounds, naive_big = [100, 1000, 10_000], [1000, 10_000, 1_000_000], 5, 1
    else:
        rec_sizes = [100, 1000, 10_000, 1_000_000]
        text_sizes = [1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]
        rounds, naive_big = 15, 2
    records = _records_rows(rec_sizes, rounds, naive_big)
    texts = _text_rows(text_sizes, rounds)
    lines = []
    for n, r in records.items():
        p, q, nv = r["parse"], r["parse_query"], r["naive"]
        lines.append(line(f"{_size_label(n)} 条记录：parse_tool_result / kind=query / 朴素做法",
                          f"{_size_label(n)} records: parse_tool_result / kind=query / naive",
                          f"{p['time_ms']['median']:.3g} / {q['time_ms']['median']:.3g} / "
                          f"{nv['time_ms']['median']:.3g}", "ms",
                          p["time_ms"]["spread"],
                          peak=f"{p['peak_kb']:.0f} / {q['peak_kb']:.0f} / {nv['peak_kb']:.0f} KB"))
    for size, r in texts.items():
        s, p, nv = r["smart_truncate"], r["parse"], r["naive"]
        lines.append(line(f"{_bytes_label(size)} 文本：smart_truncate / parse_tool_result / 朴素截断",
                          f"{_bytes_label(size)} text: smart_truncate / parse_tool_result / naive cut",
                          f"{s['time_us']['median']:.3g} / {p['time_us']['median']:.3g} / "
                          f"{nv['time_us']['median']:.3g}", "µs", s["time_us"]["spread"],
                          peak=f"{s['peak_kb']:.0f} / {p['peak_kb']:.0f} / {nv['peak_kb']:.0f} KB"))
    big, small = max(records), 1000
    t_big, t_small = records[big]["parse"]["time_ms"]["median"], records[small]["parse"]["time_ms"]["median"]
    q_ratio = records[big]["parse_query"]["time_ms"]["median"] / records[small]["parse_query"]["time_ms"]["median"]
    speedup = records[big]["naive"]["time_ms"]["median"] / t_big
    lines += [
        line(f"比值 t({_size_label(big)}) / t(10^3)，parse_tool_result", f"ratio t({_size_label(big)}) / t(10^3), "
             "parse_tool_result", t_big / t_small, "×"),
        line(f"比值 t({_size_label(big)}) / t(10^3)，kind=query（统计最多抽 10^4 行）",
             f"ratio t({_size_label(big)}) / t(10^3), kind=query (statistics sample ≤ 10^4 rows)", q_ratio, "×"),
        line(f"{_size_label(big)} 条记录：朴素做法 / parse_tool_result", f"{_size_label(big)} records: naive / ours",
             speedup, "×"),
    ]
    targets = [
        target(f"t({_size_label(big)}) / t(10^3) ≤ 3", f"t({_size_label(big)}) / t(10^3) ≤ 3", t_big / t_small, "<=",
               3.0, "×"),
        target(f"{_size_label(big)} 条记录 < 50 ms", f"< 50 ms at {_size_label(big)} records", t_big, "<", 50.0, "ms"),
    ]
    note = (f"max_tokens={MAX_TOKENS}；记录 {rounds} 轮交替（朴素做法在 ≥10^5 时只跑 {naive_big} 次）；"
            "内存为单独一次运行的 tracemalloc 峰值")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"records": records, "text": texts, "rounds": rounds, "max_tokens": MAX_TOKENS})
