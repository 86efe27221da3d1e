"""The one guard for code the toolkit calls but did not write: run_plugin, and PluginError.

A plug-in (the executor's parse / truncate / retry, run_agent's format_message /
evaluate / check / clear, a registered wire format, a hook) is someone else's code
running inline. It may fail in any way, also while the toolkit reads what it
returned: `run_plugin(name, work)` turns every such failure into a PluginError
naming the plug-in, which the caller turns into an error result, an error reason
or a record. "Any way" means any BaseException but KeyboardInterrupt, SystemExit
and a cancellation from outside (`own_failure`): a GeneratorExit, or a CancelledError
the code made itself, is its own failure too.
"""
from __future__ import annotations

import asyncio
from typing import Callable, TypeVar

from . import wording
from .redaction import safe_str

__all__ = ["PluginError", "run_plugin", "failed", "own_failure", "cancelled_from_outside"]

T = TypeVar("T")


class PluginError(Exception):
    """A plug-in failed (raised, or returned what the road cannot take). `message` is the model-facing Chinese
    text; `detail` names what was raised ("KeyError: 'data'"), `raised` is it (None for a wrong return value)."""

    def __init__(self, plugin: str, message: str, detail: str = "", raised: BaseException | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.message = message
        self.detail = detail or message
        self.raised = raised


def cancelled_from_outside() -> bool:
    """Whether the running asyncio task has been asked to stop (Task.cancel: Ctrl-C, a caller's timeout,
    a cancelled batch); False outside a task."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop running: nothing can cancel this code from outside
        return False
    return task is not None and task.cancelling() > 0


def own_failure(exc: BaseException) -> bool:
    """Whether `exc`, raised by code the toolkit did not write (a plug-in, a tool), is that code's own failure, to
    become an error result: every exception, GeneratorExit and a CancelledError the code made itself (a retry that
    cancels its own slow attempt). Not KeyboardInterrupt, SystemExit, nor a CancelledError while the running
    task is being cancelled from outside (Task.cancelling() > 0, Python 3.11): those must propagate."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return False
    return not (isinstance(exc, asyncio.CancelledError) and cancelled_from_outside())


def failed(plugin: str, exc: BaseException) -> PluginError:
    """The PluginError for `exc`, raised by the plug-in `plugin`."""
    detail = f"{type(exc).__name__}: {safe_str(exc, 200)}"
    return PluginError(plugin, wording.plugin_failed(plugin, detail), detail, exc)


def run_plugin(plugin: str, work: Callable[[], T]) -> T:
    """work(): a plug-in called, and what it returned read and checked. What fails there in any way becomes a
    PluginError naming `plugin` (KeyboardInterrupt, SystemExit and a cancellation from outside propagate); a
    PluginError `work` raises itself (a wrong return value) passes as it is."""
    try:
        return work()
    except PluginError:
        raise
    except BaseException as exc:  # the plug-in boundary: code the toolkit did not write fails in any way
        if not own_failure(exc):
            raise
        raise failed(plugin, exc) from exc
