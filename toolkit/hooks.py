"""Observing the executor: frozen ToolEvent records, and calling hooks so they cannot break a call.

`ToolExecutor(hooks=[fn])` calls `fn(event)` when an attempt starts, when it
ends, before a backoff wait and when a call is finished, each time with the
clock's time. A chart or a widget subscribes this way and draws attempts as
they happen. A hook runs inline and should be quick; whatever it raises is
caught and kept in `executor.hook_errors`, never raised into the tool call.
"""
from __future__ import annotations

import inspect
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from .results import safe_str

if TYPE_CHECKING:
    from .results import ToolResult
    from .retry import Attempt

__all__ = ["ToolEvent", "EventKind", "Hook", "HookError", "call_hooks"]

EventKind = Literal["attempt_start", "attempt_end", "wait", "call_end"]


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One thing that happened to a tool call, at clock time `time` (seconds).

    kind: "attempt_start" (attempt number `attempt` begins), "attempt_end"
      (it ended with `outcome` "ok" / "partial" / "error" / "timeout", and
      `error_type` / `code` on failure), "wait" (a backoff of `wait` seconds
      follows attempt `attempt`), "call_end" (the call is finished: `result`
      is its ToolResult, `outcome` its status, `attempt` the attempt count).
    record: the Attempt itself on "attempt_end" (start, end, message, wait_after).
    """

    kind: EventKind
    tool: str
    call_id: str | None
    time: float
    attempt: int = 0
    outcome: str | None = None
    error_type: str | None = None
    code: str | None = None
    wait: float = 0.0
    result: "ToolResult | None" = None
    record: "Attempt | None" = None


Hook = Callable[[ToolEvent], Any]


@dataclass(frozen=True)
class HookError:
    """A hook (or listener) that raised: which one, on which event, and what it raised."""

    hook: str
    kind: str
    error: str
    exception: BaseException


def _name(fn: Any) -> str:
    """A hook's name for HookError; never raises (an object whose attributes raise is named by its type)."""
    for attr in ("__qualname__", "__name__"):
        try:
            name = getattr(fn, attr, None)
        except Exception:
            continue
        if isinstance(name, str) and name:
            return safe_str(name, 200)
    return type(fn).__name__


def call_hooks(hooks: Iterable[Callable[[Any], Any]], payload: Any, errors: "deque[HookError] | list[HookError]",
               kind: str) -> None:
    """Call every hook with `payload`; what one raises is recorded in `errors`, never raised.

    A hook that returns an awaitable (an `async def` hook) is refused the same
    way: hooks run inline, so they must be plain functions. The exception is
    described with `safe_str`, so one whose `__str__` or `__repr__` raises is
    recorded too. Only KeyboardInterrupt and SystemExit propagate: a hook runs
    inline without awaiting, so a CancelledError or GeneratorExit it raises is
    its own bug, not a cancellation of the call.
    """
    for hook in list(hooks):
        try:
            value = hook(payload)
            if inspect.isawaitable(value):
                close = getattr(value, "close", None)
                if close is not None:
                    close()  # no "coroutine was never awaited" warning
                raise TypeError("a hook must be a plain function, not async: it runs inline with the call")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: B036 (a hook's own CancelledError is recorded, see above)
            errors.append(HookError(_name(hook), kind, f"{type(exc).__name__}: {safe_str(exc, 280)}", exc))
