"""Backoff as a value: exponential waits with a cap and one of four jitter formulas.

A `Backoff` is data a student can print, preview (`schedule`) and bound
(`worst_case`); `RetryPolicy` (toolkit.retry) holds one, and the retry loop
only asks it for the next wait.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

__all__ = ["Backoff", "Jitter"]

Jitter = Literal["none", "full", "equal", "decorrelated"]

_FORMULAS = {
    "none": "min(cap, base·factor^n)",
    "full": "uniform(0, min(cap, base·factor^n))",
    "equal": "t/2 + uniform(0, t/2), t = min(cap, base·factor^n)",
    "decorrelated": "min(cap, uniform(base, 3·previous))",
}


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with a cap and one of the four jitter formulas.

    The formulas are those of AWS's "Exponential Backoff and Jitter":
    none, full, equal and decorrelated. `n` counts retries from 0.
    """

    base: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    jitter: Jitter = "full"

    def __post_init__(self) -> None:
        if self.jitter not in _FORMULAS:
            raise ValueError(f"jitter 只能是 {sorted(_FORMULAS)} 之一，收到的是 {self.jitter!r}：请改成其中之一")
        if not (self.base >= 0 and self.factor >= 1 and self.cap >= 0):
            raise ValueError(f"Backoff 的参数要满足 base >= 0、factor >= 1、cap >= 0，收到的是 base={self.base!r}、"
                             f"factor={self.factor!r}、cap={self.cap!r}：请把不满足的那个改过来")

    def ceiling(self, n: int) -> float:
        """The largest wait before retry `n` (0-based), before jitter."""
        exp = min(n, 1000)
        try:
            return min(self.cap, self.base * self.factor ** exp)
        except OverflowError:  # factor ** n beyond float range (factor 3, n = 700): the cap holds
            return self.cap if self.base > 0 else 0.0

    def wait(self, n: int, previous: float | None, rng: random.Random) -> float:
        """The wait before retry `n`, drawn from `rng`."""
        t = self.ceiling(n)
        if self.jitter == "none":
            return t
        if self.jitter == "full":
            return rng.uniform(0, t)
        if self.jitter == "equal":
            return t / 2 + rng.uniform(0, t / 2)
        prev = self.base if previous is None else previous
        return min(self.cap, rng.uniform(self.base, max(prev * 3, self.base)))

    def schedule(self, retries: int, seed: int | None = 0) -> list[float]:
        """The waits this policy would take for `retries` retries with `seed`."""
        rng, waits, prev = random.Random(seed), [], None
        for n in range(retries):
            prev = self.wait(n, prev, rng)
            waits.append(prev)
        return waits

    def worst_case(self, retries: int) -> float:
        """The longest total wait any seed can give for `retries` retries."""
        if self.jitter == "decorrelated":
            total, prev = 0.0, self.base
            for _ in range(retries):
                prev = min(self.cap, max(prev * 3, self.base))
                total += prev
            return total
        return sum(self.ceiling(n) for n in range(retries))

    def __str__(self) -> str:
        return (f"Backoff[{self.jitter} jitter] wait = {_FORMULAS[self.jitter]} "
                f"(base={self.base:g}s, factor={self.factor:g}, cap={self.cap:g}s)")
