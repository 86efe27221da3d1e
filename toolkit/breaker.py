"""The circuit breaker: after repeated failures a tool is left alone for a while, then tried once.

Used by the executor (`ToolExecutor(breaker=CircuitBreaker(...))`), which reports
every change of state and every refused call as a ToolEvent (toolkit.hooks).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CircuitBreaker", "BreakerState"]

BreakerState = Literal["closed", "open", "half_open"]
MAX_COUNTED = 1000  # closed circuits with a failure count kept at most


@dataclass
class CircuitBreaker:
    """Per-tool circuit breaker: after `failure_threshold` consecutive retryable
    failures, calls fail fast (or go to the tool's fallback) for `cooldown`
    seconds; then one trial call decides whether it closes again.

    Only a retryable failure (the service did not answer) counts. Any answer
    resets the count and closes the circuit: a success, a partial result (the
    service answered with part of the data) and a fatal error (it answered no).
    States: "closed"; "open" (cooling down: calls are refused); "half_open" (the
    cool-down is over: the next call goes through as the trial, and while it runs
    the others are refused). A trial that never reports back counts as lost after
    another `cooldown`, and the next call becomes the trial.
    At most MAX_COUNTED closed circuits keep a failure count: past that, the
    oldest count is forgotten (an open circuit never is), so a program calling
    ever new tool names cannot grow the breaker.
    """

    failure_threshold: int = 5
    cooldown: float = 30.0
    _failures: dict[str, int] = field(default_factory=dict, repr=False)
    _opened_at: dict[str, float] = field(default_factory=dict, repr=False)
    _trial_at: dict[str, float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.failure_threshold, bool) or not isinstance(self.failure_threshold, int) \
                or self.failure_threshold < 1:
            raise ValueError(f"failure_threshold 是连续失败几次后熔断，应是不小于 1 的整数，收到 "
                             f"{self.failure_threshold!r}：请改成 1 或更大，例如 3")
        if isinstance(self.cooldown, bool) or not isinstance(self.cooldown, (int, float)) or not self.cooldown >= 0:
            raise ValueError(f"cooldown 是熔断后暂停的秒数，应是不小于 0 的数，收到 {self.cooldown!r}：请改成 0 或正数，例如 30")

    def state(self, name: str, now: float) -> BreakerState:
        """"closed", "open" or "half_open"."""
        opened = self._opened_at.get(name)
        if opened is None:
            return "closed"
        if name in self._trial_at:
            return "half_open"
        return "open" if now - opened < self.cooldown else "half_open"

    def allow(self, name: str, now: float) -> bool:
        """Whether a call may go ahead; after the cool-down only one trial call does."""
        opened = self._opened_at.get(name)
        if opened is None:
            return True
        trial = self._trial_at.get(name)
        if now - (opened if trial is None else trial) < self.cooldown:
            return False  # cooling down, or a trial call is running
        self._trial_at[name] = now
        return True

    def record(self, name: str, ok: bool, now: float) -> None:
        """Record one finished call: ok=False only for a retryable failure (see the class doc)."""
        self._trial_at.pop(name, None)
        if ok:
            self._failures.pop(name, None)
            self._opened_at.pop(name, None)
            return
        if name not in self._failures and len(self._failures) >= MAX_COUNTED:
            self._forget_a_count()
        self._failures[name] = self._failures.get(name, 0) + 1
        if self._failures[name] >= self.failure_threshold or name in self._opened_at:
            self._opened_at[name] = now

    def _forget_a_count(self) -> None:
        """Drop the oldest failure count of a closed circuit (a count below the threshold)."""
        for name in self._failures:
            if name not in self._opened_at:
                del self._failures[name]
                return
