"""Ctrl-C in a notebook: run_agent inside a running event loop stops at once and cancels the hanging tool (9.7).

A notebook cell runs inside Jupyter's event loop, so run_agent's tool batch runs
on a helper thread; the interrupt arrives in the calling (main) thread. Here a
real SIGINT sent to the main thread (`signal.pthread_kill`, which also wakes a
loop waiting in select, as Ctrl-C does) plays the student's "interrupt kernel",
with a bounded real-time wait.
"""
from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from support import scripted_client
from toolkit import ToolRegistry
from toolkit.agent import run_agent
from toolkit.agent.sync import CANCEL_WAIT_S, run_sync


pytestmark = pytest.mark.usefixtures("ctrl_c")  # every test here plays Ctrl-C, however the suite was started


def hanging_registry(started: threading.Event, cancelled: threading.Event) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def hang() -> dict:
        """一个一直不返回的工具"""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    return registry


def _interrupt_when(started: threading.Event, delay: float = 0.2) -> dict:
    sent: dict = {}

    def go() -> None:
        if started.wait(30):
            time.sleep(delay)
            sent["at"] = time.monotonic()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=go, daemon=True).start()
    return sent


def test_ctrl_c_in_a_notebook_cell_stops_run_agent_and_cancels_the_hanging_tool():
    started, cancelled = threading.Event(), threading.Event()
    client, _ = scripted_client([{"tool_calls": [("hang", "{}")]}, {"content": "不会走到这里"}])
    registry = hanging_registry(started, cancelled)

    async def notebook_cell():  # a cell's code runs while Jupyter's loop is running
        return run_agent("运行那个工具", client=client, model="scripted", registry=registry)

    sent = _interrupt_when(started)
    loop = asyncio.new_event_loop()  # like ipykernel: a loop without asyncio.run's own SIGINT handler
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(notebook_cell())
    finally:
        loop.close()
    raised_after = time.monotonic() - sent["at"]
    assert raised_after < CANCEL_WAIT_S + 1.0, f"Ctrl-C surfaced only after {raised_after:.1f} s"
    assert cancelled.wait(5), "the hanging tool was never cancelled"


def test_ctrl_c_under_asyncio_run_also_stops_promptly_and_cancels_the_tool():
    """asyncio.run answers Ctrl-C by cancelling its main task, which is blocked in run_agent: seen, passed on."""
    started, cancelled = threading.Event(), threading.Event()
    client, _ = scripted_client([{"tool_calls": [("hang", "{}")]}, {"content": "不会走到这里"}])
    registry = hanging_registry(started, cancelled)

    async def main():
        return run_agent("运行那个工具", client=client, model="scripted", registry=registry)

    sent = _interrupt_when(started)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert time.monotonic() - sent["at"] < CANCEL_WAIT_S + 1.0
    assert cancelled.wait(5)


def test_ctrl_c_in_a_script_also_cancels_the_hanging_tool():
    started, cancelled = threading.Event(), threading.Event()
    client, _ = scripted_client([{"tool_calls": [("hang", "{}")]}, {"content": "不会走到这里"}])
    sent = _interrupt_when(started)
    with pytest.raises(KeyboardInterrupt):
        run_agent("运行那个工具", client=client, model="scripted", registry=hanging_registry(started, cancelled))
    assert time.monotonic() - sent["at"] < CANCEL_WAIT_S + 1.0
    assert cancelled.wait(5)


def test_run_sync_inside_a_running_loop_returns_the_result_and_passes_errors_on():
    async def answer():
        return 42

    async def broken():
        raise ValueError("坏了")

    async def cell():
        assert run_sync(answer()) == 42
        with pytest.raises(ValueError, match="坏了"):
            run_sync(broken())

    asyncio.run(cell())


def test_run_sync_carries_the_callers_context_into_the_helper_thread():
    import contextvars

    var = contextvars.ContextVar("var", default="outer-default")

    async def read():
        return var.get()

    async def cell():
        var.set("set in the cell")
        return run_sync(read())

    assert asyncio.run(cell()) == "set in the cell"
