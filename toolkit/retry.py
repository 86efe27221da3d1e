"""Retrying a tool call: the retry policy as a value, the retry budget, and call_tool_with_retry.

The policy is data (`RetryPolicy`, holding a `Backoff` from toolkit.backoff) a
student can print, preview and plot; the loop in `call_tool_with_retry` only combines the parts. Only
retryable errors are retried; fatal ones return at once. Every attempt and
wait is recorded in the returned `RetryOutcome` for charts and logs. Waits go
through the current clock (toolkit.clock), so a simulated clock makes the
whole thing instant and repeatable.
"""
from __future__ import annotations

import asyncio
import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Iterable

from . import wording
from .backoff import Backoff
from .clock import Clock, get_clock
from .results import ErrorCode, ErrorInfo, PartialResult, classify_error, unwrap_envelope

__all__ = ["RetryPolicy", "RetryBudget", "Attempt", "RetryOutcome", "call_tool_with_retry", "retry_call"]


@dataclass
class RetryBudget:
    """A run-wide token bucket for retries, like the AWS SDKs' standard retry mode.

    A retry costs `retry_cost` tokens (a timeout costs `timeout_cost`); a
    successful call refunds `success_refund`. When the bucket is empty, errors
    are returned instead of retried, so one failing dependency cannot turn one
    question into hundreds of calls. Share one instance between tools: give it
    to `ToolExecutor(budget=...)` (or `retry_call(..., budget=...)`); it is the
    one mutable piece, so it is not part of the frozen RetryPolicy.
    """

    capacity: int = 500
    retry_cost: int = 5
    timeout_cost: int = 10
    success_refund: int = 1
    tokens: int = -1
    denied: int = 0

    def __post_init__(self) -> None:
        for name in ("capacity", "retry_cost", "timeout_cost", "success_refund"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(wording.bad_tokens(name, value))
        if self.tokens < 0:
            self.tokens = self.capacity

    def cost(self, info: ErrorInfo) -> int:
        """What retrying after `info` costs: timeout_cost for a timeout, else retry_cost."""
        return self.timeout_cost if info.error_code == ErrorCode.TIMEOUT else self.retry_cost

    def try_spend(self, info: ErrorInfo) -> bool:
        """Take the cost of retrying after `info`; False (and nothing taken) if it is not there."""
        cost = self.cost(info)
        if self.tokens < cost:
            self.denied += 1
            return False
        self.tokens -= cost
        return True

    def refund(self) -> int:
        """Put success_refund back (never above capacity); returns how many tokens were put back."""
        before = self.tokens
        self.tokens = min(self.capacity, self.tokens + self.success_refund)
        return self.tokens - before


@dataclass(frozen=True)
class RetryPolicy:
    """Everything that decides whether and when to try again, as one printable value.

    max_retries: retries after the first attempt (3 -> at most 4 attempts).
    attempt_timeout: seconds one attempt may take (None: no limit).
    deadline: seconds for the whole call, waits included (None: no limit).
    idempotent: False for tools that write: a timeout or dropped connection
      is then not retried, since the write may already have happened.
    """

    max_retries: int = 3
    backoff: Backoff = field(default_factory=Backoff)
    attempt_timeout: float | None = None
    deadline: float | None = None
    respect_retry_after: bool = True
    max_retry_after: float = 60.0
    idempotent: bool = True
    classify: Callable[[BaseException], ErrorInfo] = classify_error

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or isinstance(self.max_retries, bool) or self.max_retries < 0:
            raise ValueError(wording.bad_max_retries(self.max_retries))
        for name in ("attempt_timeout", "deadline"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(wording.bad_seconds(name, value))

    def should_retry(self, info: ErrorInfo) -> bool:
        """Retry only what can succeed next time and cannot do harm twice."""
        if not info.retryable:
            return False
        if not self.idempotent and info.error_code not in (ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE):
            return False
        return True

    def fits(self, deadline: float | None = None) -> bool:
        """Whether every retry fits in `deadline` (default: this policy's) in the worst case."""
        deadline = self.deadline if deadline is None else deadline
        return deadline is None or self.worst_case() <= deadline

    def worst_case(self) -> float:
        """Longest possible total time: all attempts timing out plus the longest waits.

        With attempt_timeout None an attempt has no bound and counts as 0 s here:
        set attempt_timeout (or a deadline) for a real bound.
        """
        per_attempt = self.attempt_timeout or 0.0
        return (self.max_retries + 1) * per_attempt + self.backoff.worst_case(self.max_retries)

    def with_(self, **changes: Any) -> "RetryPolicy":
        """A copy with some fields changed."""
        return replace(self, **changes)


@dataclass(slots=True)
class Attempt:
    """One try: when it ran (clock seconds), how it ended, and the wait that followed."""

    number: int
    start: float
    end: float
    outcome: str              # "ok", "partial", "error", "timeout"
    error_type: str | None = None
    error_code: str | None = None
    message: str | None = None
    wait_after: float = 0.0

    @property
    def duration(self) -> float:
        return self.end - self.start


_SAME: Any = object()  # RetryOutcome's data defaults to its result


class RetryOutcome(tuple[Any, "str | None"]):
    """`(result, error)` as in the original course code, plus the record of what happened. Frozen.

    Unpacks and compares as the pair `(result, error)`; also has `.trace` (a
    tuple of Attempt, as ToolResult.trace), `.attempts` (how many: as
    ToolResult.attempts), `.info` (ErrorInfo of the last failure, or None),
    `.gave_up` (why it stopped: "fatal", "max_retries", "deadline", "budget",
    "not_idempotent", or None on success), `.elapsed` (clock seconds) and `.waits`.
    `.data` and `.source` are the tool's envelope opened (toolkit.results.unwrap_envelope),
    once, where the loop looked at it: for a {status, data, source, error}
    envelope its data (or an error's extra fields) and its source; for any other
    value the value itself and None.
    """

    trace: tuple[Attempt, ...]
    info: ErrorInfo | None
    gave_up: str | None
    elapsed: float
    data: Any
    source: Any

    def __new__(cls, result: Any, error: str | None, *, trace: Iterable[Attempt] = (),
                info: ErrorInfo | None = None, gave_up: str | None = None,
                elapsed: float = 0.0, data: Any = _SAME, source: Any = None) -> "RetryOutcome":
        self = super().__new__(cls, (result, error))
        fields = self.__dict__
        fields["trace"], fields["info"] = tuple(trace), info
        fields["gave_up"], fields["elapsed"] = gave_up, elapsed
        fields["data"], fields["source"] = (result if data is _SAME else data), source
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(wording.frozen_outcome(name))

    def __delattr__(self, name: str) -> None:
        raise AttributeError(wording.frozen_outcome(name))

    def __getnewargs_ex__(self) -> tuple[tuple, dict]:  # copy and pickle
        return (self[0], self[1]), {"trace": self.trace, "info": self.info, "gave_up": self.gave_up,
                                    "elapsed": self.elapsed, "data": self.data, "source": self.source}

    @property
    def result(self) -> Any:
        return self[0]

    @property
    def error(self) -> str | None:
        return self[1]

    @property
    def attempts(self) -> int:
        """How many attempts were made (the length of `trace`)."""
        return len(self.trace)

    @property
    def waits(self) -> list[float]:
        return [a.wait_after for a in self.trace if a.wait_after > 0]

    def __repr__(self) -> str:
        return (f"RetryOutcome(result={self[0]!r:.80}, error={self[1]!r:.80}, attempts={self.attempts}, "
                f"gave_up={self.gave_up!r}, elapsed={self.elapsed:g})")


async def _race(value: Awaitable[Any], timeout: float, clock: Clock) -> Any:
    """Await an async tool's attempt, cancelled after `timeout` clock seconds (TimeoutError).

    Sync tools run inline in the caller and cannot be cut short: wrap a blocking
    one in asyncio.to_thread to give it a timeout.
    """
    task = asyncio.ensure_future(value)
    timer = asyncio.ensure_future(clock.sleep(timeout))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # cancelled from outside: stop the attempt, then pass it on
        await _stop({task, timer}, clock)
        if task.done() and not task.cancelled():
            task.exception()  # mark it retrieved: no "Task exception was never retrieved" log at GC
        raise
    finished = task.done()
    await _stop({task, timer}, clock)
    if not finished:
        raise TimeoutError(wording.attempt_timed_out(timeout))
    return task.result()


CANCEL_GRACE = 1.0  # clock seconds a cancelled attempt gets to finish before it is abandoned


async def _stop(tasks: set[asyncio.Future], clock: Clock) -> None:
    """Cancel the unfinished `tasks` and wait until they end (at most CANCEL_GRACE clock seconds)."""
    pending = {t for t in tasks if not t.done()}
    if not pending:
        return
    for t in pending:
        t.cancel()
    grace = asyncio.ensure_future(clock.sleep(CANCEL_GRACE))
    try:
        while pending and not grace.done():
            done, _ = await asyncio.wait(pending | {grace}, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
    finally:
        grace.cancel()
        await asyncio.wait({grace})


def _resolve_policy(max_retries: int | None = None, policy: RetryPolicy | None = None) -> RetryPolicy:
    """The policy a call runs under: `policy`, or RetryPolicy(max_retries=max_retries) (default 3).

    One way per setting: giving both raises ValueError (the number of retries is
    part of the policy), as does a max_retries that is not an int >= 0.
    """
    if policy is not None:
        if max_retries is not None:
            raise ValueError(wording.max_retries_beside_policy(max_retries, "policy=RetryPolicy"))
        return policy
    return RetryPolicy(max_retries=3 if max_retries is None else max_retries)


BudgetObserver = Callable[[str, int, int], None]
"""on_budget(kind, cost, tokens): kind "withdraw", "refund" or "deny"; tokens left afterwards."""


async def call_tool_with_retry(tool_fn: Callable[..., Any | Awaitable[Any]], /, *args: Any,
                               max_retries: int | None = None, policy: RetryPolicy | None = None,
                               on_attempt: Callable[[Attempt], None] | None = None,
                               budget: RetryBudget | None = None, **kwargs: Any) -> RetryOutcome:
    """Call `tool_fn(*args, **kwargs)`, retrying transient failures with backoff.

    Returns `(result, error)`: on success error is None; on failure result is
    None (or the tool's own error envelope) and error is a Chinese message that
    says what failed and how many attempts were made. Sync and async tools
    both work. Fatal errors (permission, bad arguments, 4xx) are returned
    after one attempt; retryable ones (timeouts, connection errors, 429, 5xx)
    are retried up to `max_retries` times (default 3) with the policy's
    backoff, at least as long as the server's Retry-After, within the policy's
    deadline and the retry `budget` (a RetryBudget shared by many calls, or
    None). Waits use the current clock (`use_clock`).
    KeyboardInterrupt, SystemExit and cancellation propagate.

    Settings: `max_retries` or a whole `policy` (not both: ValueError);
    `on_attempt(attempt)` is called after every attempt (its exceptions
    propagate: it is your code). Every other keyword goes to the tool; a tool
    whose own parameters are named max_retries, policy, on_attempt or budget is
    called with `retry_call(policy, tool_fn, args, kwargs)`, which reserves no names.
    Raises ValueError for a max_retries that is not an int >= 0, TypeError for a tool_fn that is not a function.
    """
    return await retry_call(_resolve_policy(max_retries, policy), tool_fn, args, kwargs, on_attempt=on_attempt,
                            budget=budget)


async def retry_call(policy: RetryPolicy, tool_fn: Callable[..., Any], args: tuple = (),
                     kwargs: dict | None = None, *, budget: RetryBudget | None = None,
                     on_attempt: Callable[[Attempt], None] | None = None,
                     on_attempt_start: Callable[[int, float], None] | None = None,
                     on_budget: BudgetObserver | None = None) -> RetryOutcome:
    """The retry loop: settings and the tool's arguments each in their own place.

    Calls `tool_fn(*args, **kwargs)` under `policy` (see call_tool_with_retry for
    what is retried), spending from `budget` (a RetryBudget, or None: no budget).
    `on_attempt_start(number, time)` runs before each attempt, `on_attempt(attempt)`
    after it, `on_budget(kind, cost, tokens)` after every change the call makes to
    the budget (and on a denial); all are the caller's code and may raise.
    """
    if not callable(tool_fn):
        raise TypeError(wording.not_a_tool("tool_fn", tool_fn))
    kwargs = kwargs or {}
    clock = get_clock()
    start = t0 = clock.now()
    attempts: list[Attempt] = []
    previous_wait: float | None = None
    n = 0
    while True:
        n += 1
        if on_attempt_start is not None:
            on_attempt_start(n, t0)
        timeout = policy.attempt_timeout
        if policy.deadline is not None:
            remaining = policy.deadline - (t0 - start)
            timeout = remaining if timeout is None else min(timeout, remaining)
        try:
            value = tool_fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await (value if timeout is None else _race(value, timeout, clock))
            data, source, info = unwrap_envelope(value)  # a tool's {status, data, source, error}: opened here, once
        except Exception as exc:  # the attempt failed, opening its value too; a BaseException is never caught here
            info = policy.classify(exc)
            value = data = source = None
        else:
            if info is None:
                end = clock.now()
                attempt = Attempt(n, t0, end, "partial" if isinstance(value, PartialResult) else "ok")
                attempts.append(attempt)
                if on_attempt is not None:
                    on_attempt(attempt)
                if budget is not None:
                    refunded = budget.refund()
                    if refunded and on_budget is not None:
                        on_budget("refund", refunded, budget.tokens)
                return RetryOutcome(value, None, trace=attempts, elapsed=end - start, data=data, source=source)
        t1 = clock.now()
        why, wait = _decide(policy, info, n, previous_wait, clock, start, t1)
        if why is None and budget is not None:
            why, wait = _spend(budget, info, wait, on_budget)
        attempt = Attempt(n, t0, t1, "timeout" if info.error_code == ErrorCode.TIMEOUT else "error",
                          info.error_type, info.error_code, info.message, wait or 0.0)
        attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        if why is not None or wait is None:
            return RetryOutcome(value, wording.gave_up(info.message, n, why, policy.deadline), trace=attempts,
                                info=info, gave_up=why, elapsed=clock.now() - start, data=data, source=source)
        previous_wait = wait
        await clock.sleep(wait)
        t0 = clock.now()


def _decide(policy: RetryPolicy, info: ErrorInfo, n: int, previous: float | None,
            clock: Clock, start: float, now: float) -> tuple[str | None, float | None]:
    """(why we stop, or None; the wait before the next attempt, or None)."""
    if not info.retryable:
        return "fatal", None
    if not policy.should_retry(info):
        return "not_idempotent", None
    if n > policy.max_retries:
        return "max_retries", None
    wait = policy.backoff.wait(n - 1, previous, clock.random)
    if policy.respect_retry_after and info.retry_after is not None:
        wait = max(wait, min(info.retry_after, policy.max_retry_after))
    if policy.deadline is not None and (now - start) + wait >= policy.deadline:
        return "deadline", None
    return None, (wait if math.isfinite(wait) else policy.backoff.cap)


def _spend(budget: RetryBudget, info: ErrorInfo, wait: float | None,
           on_budget: BudgetObserver | None) -> tuple[str | None, float | None]:
    """Pay for the retry `_decide` allowed: (None, wait) when the budget has the tokens, else ("budget", None)."""
    cost = budget.cost(info)
    if budget.try_spend(info):
        if on_budget is not None:
            on_budget("withdraw", cost, budget.tokens)
        return None, wait
    if on_budget is not None:
        on_budget("deny", cost, budget.tokens)
    return "budget", None
