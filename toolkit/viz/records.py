"""The records a chart accepts, brought into one shape.

The timeline takes a ToolResult, a RetryOutcome, one call's list of Attempt, an
executor (its call_history), the ToolEvents a hook collected (the finished calls:
their "call_end" events carry the results), or a list of any of these: each becomes
a `Row`. The statistics take an executor, ToolResults or ToolEvents and become
`CallRecords`: the results, and the breaker's and the budget's events.

A time that is not a finite number (NaN, an infinity: a hand-made record, a broken
clock) cannot be placed: such an attempt or call is left out, and the chart says how
many were (`Rows.invalid`, `CallRecords.invalid`), instead of raising.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..hooks import ToolEvent
from ..results import ErrorCode, ToolResult
from ..retry import Attempt, RetryOutcome
from .style import NOT_RUN, finite

__all__ = ["attempt_outcome", "call_outcome", "Row", "Rows", "timeline_rows", "CallRecords", "call_records"]


def attempt_outcome(attempt: Attempt) -> str:
    """The colour class of one attempt: ok, partial, retryable, fatal or timeout."""
    if attempt.outcome in ("ok", "partial", "timeout"):
        return attempt.outcome
    if attempt.error_code == ErrorCode.TIMEOUT:
        return "timeout"
    return "fatal" if attempt.error_type == "fatal" else "retryable"


def call_outcome(result: ToolResult) -> str:
    """How a call ended, in the attempts' colour classes, or NOT_RUN when none of its code ran
    (refused by an open circuit breaker or by the argument check: no attempt at all)."""
    if result.status == "success":
        return "ok"
    if result.status == "partial":
        return "partial"
    if not result.trace:
        return NOT_RUN
    if result.error_code == ErrorCode.TIMEOUT:
        return "timeout"
    return "fatal" if result.error_type == "fatal" else "retryable"


@dataclass
class Row:
    """One row of the timeline: a call's attempts (those with finite times), where it starts, its label,
    and for a call that never ran, the code that says why."""

    label: str
    trace: list[Attempt]
    start: float
    note: str | None = None


@dataclass
class Rows:
    rows: list[Row]
    invalid: int = 0  # attempts or calls left out because a time was not a finite number

    @property
    def attempts(self) -> int:
        return sum(len(row.trace) for row in self.rows)


def _calls(source: Any) -> list:
    """The calls in `source`, each a ToolResult, a RetryOutcome or a list of Attempt."""
    if isinstance(source, (ToolResult, RetryOutcome)):
        return [source]
    history = getattr(source, "call_history", None)
    if history is not None:
        return list(history)
    try:
        items = list(source)
    except TypeError:
        raise TypeError(f"retry_timeline 需要 ToolResult、RetryOutcome、执行器或它们的列表，收到 "
                        f"{type(source).__name__}") from None
    if items and all(isinstance(item, Attempt) for item in items):
        return [items]  # a bare list of attempts is one call's trace
    calls = []
    for item in items:
        if isinstance(item, ToolEvent):
            if item.kind == "call_end" and item.result is not None:
                calls.append(item.result)
        elif isinstance(item, (ToolResult, RetryOutcome)) or (
                isinstance(item, (list, tuple)) and all(isinstance(a, Attempt) for a in item)):
            calls.append(item)
        else:
            raise TypeError(f"retry_timeline 需要 ToolResult、RetryOutcome 或它们的列表，收到 {type(item).__name__}")
    return calls


def timeline_rows(source: Any) -> Rows:
    """The rows of a retry timeline, in the order given (call_history is in order of completion).

    Raises TypeError for records it does not know.
    """
    rows, invalid = [], 0
    for i, call in enumerate(_calls(source), 1):
        if isinstance(call, ToolResult):
            label, trace, start = f"{i}. {call.name}", list(call.trace), call.started_at
            note = None if call.trace else str(call.error_code or "未执行")
        elif isinstance(call, RetryOutcome):
            label, trace, note = f"{i}. 调用", list(call.trace), None
            start = trace[0].start if trace else 0.0
        else:
            label, trace, note = f"{i}. 调用", list(call), None
            start = trace[0].start if trace else 0.0
        kept = [a for a in trace if finite(a.start, a.end)]
        invalid += len(trace) - len(kept) + sum(1 for a in kept if not finite(a.wait_after))
        if not finite(start):
            start = kept[0].start if kept else None
        if start is None or (trace and not kept):
            invalid += not trace
            continue
        rows.append(Row(label, kept, start, note))
    return Rows(rows, invalid)


@dataclass
class CallRecords:
    """What the call statistics draw: the results, the per-tool counts, and the events (if a hook collected
    them) of the circuit breaker and the retry budget."""

    results: list[ToolResult]
    events: list[ToolEvent] = field(default_factory=list)
    breaker: Any = None
    budget: Any = None
    total_calls: int = 0  # every call the executor counted (call_history may keep fewer)

    @property
    def breaker_events(self) -> list[ToolEvent]:
        return [e for e in self.events if e.kind in ("breaker_state", "breaker_reject") and finite(e.time)]

    @property
    def budget_events(self) -> list[ToolEvent]:
        return [e for e in self.events if e.kind.startswith("budget_") and finite(e.time)]

    @property
    def rejected(self) -> list[ToolResult]:
        """Calls the open circuit breaker refused (they never ran: no attempt)."""
        return [r for r in self.results if r.error_code == ErrorCode.CIRCUIT_OPEN]

    @property
    def attempts(self) -> int:
        return sum(len(r.trace) for r in self.results)

    @property
    def invalid(self) -> int:
        """Results whose time or duration is not a finite number (left out of the time charts)."""
        return sum(1 for r in self.results if not finite(r.started_at, r.duration_ms))


def call_records(source: Any, events: Iterable[ToolEvent] | None = None) -> CallRecords:
    """CallRecords from an executor, a ToolResult, or an iterable of ToolResult / ToolEvent.

    `events`: the ToolEvents a hook collected (`ToolExecutor(hooks=[events.append])`): the breaker's
    and the budget's pictures are drawn from them. Raises TypeError for anything else.
    """
    collected = list(events or [])
    if hasattr(source, "call_history") and hasattr(source, "get_summary"):
        results = list(source.call_history)
        return CallRecords(results, collected, getattr(source, "breaker", None), getattr(source, "budget", None),
                           max(source.get_summary()["total_calls"], len(results)))
    items = [source] if isinstance(source, ToolResult) else list(source)
    results = []
    for item in items:
        if isinstance(item, ToolEvent):
            collected.append(item)
            if item.kind == "call_end" and item.result is not None:
                results.append(item.result)
        elif isinstance(item, ToolResult):
            results.append(item)
        else:
            raise TypeError(f"call_stats 需要 ToolExecutor、ToolResult 或 ToolEvent 的列表，收到 {type(item).__name__}")
    return CallRecords(results, collected, total_calls=len(results))
