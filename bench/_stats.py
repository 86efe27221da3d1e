"""Measuring helpers shared by the rows: interleaved rounds, medians, spreads, targets.

Contenders are measured in rounds; in each round every contender runs once,
in an order that rotates from round to round, so slow drift on a shared
machine (another job starting, CPU frequency) falls on all of them alike.
A ratio is taken per round (numerator and denominator measured seconds
apart), then the median of the per-round ratios is reported.
"""
from __future__ import annotations

import gc
import math
import statistics
import time
from typing import Any, Awaitable, Callable, Sequence


def rotation(names: Sequence[str], round_no: int) -> list[str]:
    """The order of the contenders in round `round_no`: shifted by one each round."""
    if not names:
        return []
    k = round_no % len(names)
    return list(names[k:]) + list(names[:k])


def summarize(values: Sequence[float]) -> dict:
    """median, quartiles, min, max, n and the relative spread (p75 - p25) / median.

    Raises ValueError for an empty sequence.
    """
    if not values:
        raise ValueError("summarize needs at least one value")
    ordered = sorted(values)
    if len(ordered) >= 2:
        p25, _, p75 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        p25 = p75 = ordered[0]
    median = statistics.median(ordered)
    spread = (p75 - p25) / abs(median) if median else math.nan
    return {"median": median, "p25": p25, "p75": p75, "min": ordered[0], "max": ordered[-1],
            "n": len(ordered), "spread": spread}


def per_round(a: Sequence[float], b: Sequence[float], op: Callable[[float, float], float]) -> list[float]:
    """op(a[i], b[i]) for each round i (values measured in the same round)."""
    if len(a) != len(b):
        raise ValueError(f"rounds differ: {len(a)} vs {len(b)}")
    return [op(x, y) for x, y in zip(a, b)]


def interleaved(contenders: dict[str, Callable[[], float]], rounds: int,
                warmup: bool = True) -> dict[str, list[float]]:
    """Run each contender once per round (rotating order); each returns its own figure.

    With `warmup`, every contender first runs once unrecorded (lazy imports, caches).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    names = list(contenders)
    if warmup:
        for name in names:
            contenders[name]()
    results: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in rotation(names, r):
            gc.collect()
            results[name].append(contenders[name]())
    return results


async def ainterleaved(contenders: dict[str, Callable[[], Awaitable[float]]],
                       rounds: int, warmup: bool = True) -> dict[str, list[float]]:
    """interleaved() for async contenders, all inside the caller's event loop."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    names = list(contenders)
    if warmup:
        for name in names:
            await contenders[name]()
    results: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in rotation(names, r):
            gc.collect()
            results[name].append(await contenders[name]())
    return results


def per_call(call: Callable[[], Awaitable[Any]], n: int) -> Callable[[], Awaitable[float]]:
    """An async contender: n sequential awaits of call(); returns seconds per call."""
    async def run() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await call()
        return (time.perf_counter() - t0) / n
    return run


def timed(fn: Callable[[], Any]) -> Callable[[], float]:
    """A contender that runs fn() once and returns the seconds it took."""
    def run() -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return run


def target(what: str, en: str, value: float | None, op: str, limit: float, unit: str = "") -> dict:
    """One target: met is True/False, or None when the value could not be measured."""
    if op not in ("<=", "<", ">=", ">"):
        raise ValueError(f"op must be one of <=, <, >=, >; got {op!r}")
    met = None
    if value is not None and not math.isnan(value):
        met = {"<=": value <= limit, "<": value < limit, ">=": value >= limit, ">": value > limit}[op]
    return {"what": what, "en": en, "value": value, "op": op, "limit": limit, "unit": unit, "met": met}


def line(label: str, en: str, value: float | str | None, unit: str = "",
         spread: float | None = None, **extra: Any) -> dict:
    """One figure of a row's table: a Chinese label for the terminal, an English one for README."""
    return {"label": label, "en": en, "value": value, "unit": unit, "spread": spread, **extra}


def row(key: str, title: str, en: str, *, lines: list[dict] | None = None, targets: list[dict] | None = None,
        status: str = "ok", note: str = "", data: dict | None = None) -> dict:
    """A row's result as it goes into the JSON file and the table."""
    if status not in ("ok", "skipped", "error"):
        raise ValueError(f"status must be ok, skipped or error; got {status!r}")
    return {"key": key, "title": title, "en": en, "status": status, "note": note,
            "lines": lines or [], "targets": targets or [], "data": data or {}}
