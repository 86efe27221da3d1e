"""Running the loop's async tool batches from sync code, in a script and inside Jupyter's event loop.

In a script `asyncio.run` does it, and Ctrl-C cancels the running tools at once.
Inside a running event loop (a notebook cell) the batch runs on a fresh event
loop in a helper thread. The calling thread waits in short slices so that a
KeyboardInterrupt (Ctrl-C, the notebook's "interrupt kernel") is seen at once;
it then cancels the batch in the helper thread, waits up to CANCEL_WAIT_S real
seconds for the cancelled tools to end, and re-raises KeyboardInterrupt. When
the surrounding loop was started by `asyncio.run`, whose Ctrl-C handler cancels
the main task instead of raising, the cancellation is seen the same way and
passed on (asyncio.run then raises KeyboardInterrupt).

What is guaranteed: an async tool is cancelled (it receives CancelledError at
its current await) and the interrupt reaches the caller within about
CANCEL_WAIT_S seconds. What cannot be: a sync tool blocked inside a call, or an
async tool that catches CancelledError and keeps going, cannot be stopped from
outside; the helper thread is a daemon and is left to finish on its own, and
its result is discarded.
"""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from typing import Any, Callable, Coroutine

__all__ = ["run_sync", "call_plugin", "CANCEL_WAIT_S"]

CANCEL_WAIT_S = 2.0  # real seconds the cancelled tools get to end after Ctrl-C
_SLICE_S = 0.05


class _Runner(threading.Thread):
    """A daemon thread that runs one coroutine on its own event loop."""

    def __init__(self, coro: Coroutine) -> None:
        super().__init__(name="toolkit-agent-batch", daemon=True)
        self.coro = coro
        self.context = contextvars.copy_context()  # the caller's clock (use_clock) goes along
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task | None = None
        self.started_task = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        self.context.run(self._run)

    def _run(self) -> None:
        loop = self.loop = asyncio.new_event_loop()
        try:
            self.task = loop.create_task(self.coro)
            self.started_task.set()
            self.result = loop.run_until_complete(self.task)
        except BaseException as exc:  # not a guard: the thread boundary hands whatever ended the batch to the caller
            self.error = exc
        finally:
            self.started_task.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    def cancel(self) -> None:
        self.started_task.wait(CANCEL_WAIT_S)
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed in between: nothing left to cancel
                pass


def run_sync(coro: Coroutine) -> Any:
    """Run a coroutine to the end from sync code, also inside a running event loop (Jupyter).

    Returns its result or raises its exception. KeyboardInterrupt in the calling
    thread cancels it (see the module doc for what is guaranteed) and is re-raised.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        box = asyncio.run(_boxed(coro))
        if box.error is not None:
            raise box.error from None  # the coroutine's own exception, not the missing loop's
        return box.value
    caller = asyncio.current_task()  # the cell's task, blocked here while the batch runs
    runner = _Runner(coro)
    runner.start()
    try:
        while runner.is_alive():
            runner.join(_SLICE_S)
            if caller is not None and caller.cancelling():  # asyncio.run's Ctrl-C handler cancels the main task
                raise asyncio.CancelledError()
    except (KeyboardInterrupt, asyncio.CancelledError):
        runner.cancel()
        runner.join(CANCEL_WAIT_S)
        raise
    if runner.error is not None:
        raise runner.error
    return runner.result


class _Box:
    """A coroutine's result (or the exception it raised) as the task holds it. asyncio.run repr()s its finished
    task on the way out (checking its SIGINT handler): a result or exception whose repr raises would escape
    asyncio.run and leave that handler installed, and every later asyncio.run would raise it too."""

    __slots__ = ("value", "error")

    def __init__(self, value: Any, error: BaseException | None = None) -> None:
        self.value, self.error = value, error

    def __repr__(self) -> str:
        return "<result>"


async def _boxed(coro: Coroutine) -> _Box:
    try:
        return _Box(await coro)
    except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
        raise  # asyncio.run must see these as they are
    except BaseException as exc:  # not a guard: carried over asyncio.run's boundary, run_sync raises it outside
        return _Box(None, exc)


def call_plugin(plugin: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """plugin(*args, **kwargs); an async plug-in's awaitable is awaited (run_sync: inside Jupyter's loop too)."""
    value = plugin(*args, **kwargs)
    if inspect.isawaitable(value):
        value = run_sync(_awaited(value))
    return value


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
