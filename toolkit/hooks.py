"""Observing the executor: frozen ToolEvent records, and calling hooks so they cannot break a call.

`ToolExecutor(hooks=[fn])` calls `fn(event)` with a frozen `ToolEvent`, each
time with the clock's time, for everything that happens to a call:

=================  ==================================================================
kind               when, and the fields it fills
=================  ==================================================================
attempt_start      attempt number `attempt` begins
attempt_end        it ended: `outcome` "ok" / "partial" / "error" / "timeout",
                   `error_type` and `error_code` on failure, `record` the Attempt
wait               a backoff of `wait` seconds follows attempt `attempt`
call_end           the call is finished: `result` its ToolResult, `outcome` its
                   status, `attempt` the attempt count, `error_type` / `error_code`
breaker_state      the tool's circuit changed: `previous` -> `state`, each
                   "closed" / "open" / "half_open"; on opening, `wait` is the
                   cool-down in seconds. closed -> open after the failure that
                   reaches the threshold; open -> half_open when the first call
                   after the cool-down is let through as the trial; half_open ->
                   closed (the trial got an answer) or -> open (it failed again)
breaker_reject     the breaker refused a call (`error_code` CIRCUIT_OPEN); `fallback`
                   names the tool that answers instead, or None (it failed fast)
budget_withdraw    a retry took `cost` tokens from the retry budget; `tokens`
                   are left (`attempt` is the attempt that failed)
budget_refund      a successful call put `cost` tokens back; `tokens` now
budget_deny        a retry wanted `cost` tokens, only `tokens` were left: the
                   call gives up (its RetryOutcome.gave_up is "budget")
=================  ==================================================================

A chart or a widget subscribes this way and draws attempts, the breaker's open
windows and the budget's tokens as they happen, without replaying anything.
A hook runs inline and should be quick; whatever it raises is caught and kept
in `executor.hook_errors`, never raised into the tool call.
"""
from __future__ import annotations

import inspect
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from .breaker import BreakerState
from .guard import PluginError, run_plugin
from .redaction import safe_str

if TYPE_CHECKING:
    from .results import ToolResult
    from .retry import Attempt

__all__ = ["ToolEvent", "EventKind", "Hook", "HookError", "call_hooks"]

EventKind = Literal["attempt_start", "attempt_end", "wait", "call_end", "breaker_state", "breaker_reject",
                    "budget_withdraw", "budget_refund", "budget_deny"]


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One thing that happened to a tool call, at clock time `time` (seconds).

    `kind` says what (the table in the module doc says which fields each kind fills);
    fields a kind does not use keep their defaults.
    """

    kind: EventKind
    tool: str
    call_id: str | None
    time: float
    attempt: int = 0
    outcome: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    wait: float = 0.0
    result: "ToolResult | None" = None
    record: "Attempt | None" = None
    state: BreakerState | None = None
    previous: BreakerState | None = None
    fallback: str | None = None
    tokens: int | None = None
    cost: int = 0


Hook = Callable[[ToolEvent], Any]


@dataclass(frozen=True)
class HookError:
    """A hook that raised: which one, on which event, and what it raised."""

    hook: str
    kind: str
    error: str
    exception: BaseException


def _name(fn: Any) -> str:
    """A hook's name for HookError: its qualified name, else its type's."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return safe_str(name, 200)


def call_hooks(hooks: Iterable[Callable[[Any], Any]], payload: Any, errors: "deque[HookError] | list[HookError]",
               kind: str) -> None:
    """Call every hook with `payload`; what one raises is recorded in `errors`, never raised.

    A hook that returns an awaitable (an `async def` hook) is refused the same
    way: hooks run inline, so they must be plain functions. A hook is a plug-in
    (toolkit.guard.run_plugin): a GeneratorExit or a CancelledError of its own is its
    failure too; KeyboardInterrupt, SystemExit and a cancellation from outside propagate.
    """
    for hook in list(hooks):
        try:
            run_plugin("hook", lambda hook=hook: _plain(hook(payload)))
        except PluginError as failed:
            errors.append(HookError(_name(hook), kind, failed.detail, failed.raised or failed))


def _plain(value: Any) -> None:
    """A hook's return value: an awaitable (an `async def` hook) is refused, since hooks run inline."""
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()  # no "coroutine was never awaited" warning
        raise TypeError("钩子要是普通函数，不能是 async 函数：它在调用中同步运行，请去掉 async")
