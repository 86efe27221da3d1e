"""Cancellation and interrupts: they always win over retries.

Cancelling execute(), run_tool_calls() or call_tool_with_retry while a tool runs
(or while a retry waits) raises CancelledError at once and leaves no task of
ours running. KeyboardInterrupt and SystemExit raised by a tool are never caught,
never turned into an error result and never retried: the tool runs once.
"""
from __future__ import annotations

import asyncio
import gc
import time

import pytest

from toolkit import (RetryPolicy, SimulatedClock, Tool, ToolExecutor, ToolRegistry, call_tool_with_retry,
                     inject_faults, use_clock)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}


class Hanging:
    """An async tool that never returns; records how often it started and whether it was cancelled."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.running = asyncio.Event()

    async def __call__(self, *args, **kwargs):
        self.started += 1
        self.running.set()
        try:
            await asyncio.get_running_loop().create_future()  # forever
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


async def _cancel_when_running(coro, tool: Hanging, clock: SimulatedClock) -> float:
    """Start `coro`, cancel it once the tool runs; returns the simulated seconds the cancel took."""
    task = asyncio.ensure_future(coro)
    await tool.running.wait()
    before = clock.now()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return clock.now() - before


def _others() -> set[asyncio.Task]:
    return asyncio.all_tasks() - {asyncio.current_task()}


@pytest.mark.parametrize("attempt_timeout", [None, 30.0], ids=["no-attempt-timeout", "attempt-timeout"])
def test_cancelling_call_tool_with_retry_propagates_and_leaves_no_task(attempt_timeout) -> None:
    async def main() -> None:
        tool = Hanging()
        with use_clock(SimulatedClock(seed=0)) as clock:
            policy = RetryPolicy(max_retries=5, attempt_timeout=attempt_timeout)
            took = await _cancel_when_running(call_tool_with_retry(tool, policy=policy), tool, clock)
        assert took == 0.0          # promptly: no simulated time passes
        assert tool.started == 1 and tool.cancelled == 1  # the attempt itself was cancelled, not retried
        assert _others() == set()   # nothing of ours still running

    started = time.perf_counter()
    asyncio.run(main())
    assert time.perf_counter() - started < 2.0


def test_cancelling_execute_propagates_and_leaves_no_task() -> None:
    async def main() -> None:
        tool = Hanging()
        with use_clock(SimulatedClock(seed=0)) as clock:
            executor = ToolExecutor(policy=RetryPolicy(max_retries=3, attempt_timeout=10.0))
            took = await _cancel_when_running(executor.execute(tool, "hang", "上海"), tool, clock)
        assert took == 0.0
        assert (tool.started, tool.cancelled) == (1, 1)
        assert _others() == set()
        assert executor.get_summary()["total_calls"] == 0  # a cancelled call is not a result

    asyncio.run(main())


def test_cancelling_during_backoff_wait_stops_retrying() -> None:
    async def main() -> None:
        with use_clock(SimulatedClock(seed=0)) as clock:
            async def ok() -> str:
                return "ok"
            flaky = inject_faults(ok, ["unavailable"] * 10, latency=0.0)
            task = asyncio.ensure_future(call_tool_with_retry(flaky, policy=RetryPolicy(max_retries=5)))
            while not clock.sleeps:           # run until the first backoff wait has begun
                await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert len(flaky.calls) == 1       # no retry after the cancel
            assert _others() == set()

    asyncio.run(main())


def test_cancelling_run_tool_calls_cancels_every_call_and_leaves_no_task() -> None:
    async def main() -> None:
        tool = Hanging()
        registry = ToolRegistry([Tool("hang", tool, "一直不返回", SCHEMA)])
        calls = [{"id": f"call_{i}", "function": {"name": "hang", "arguments": f'{{"city": "城市{i}"}}'}}
                 for i in range(5)]
        with use_clock(SimulatedClock(seed=0)) as clock:
            executor = ToolExecutor(registry=registry, concurrency=3,
                                    policy=RetryPolicy(max_retries=2, attempt_timeout=60.0))
            task = asyncio.ensure_future(executor.run_tool_calls(calls))
            while tool.started < 3:
                await asyncio.sleep(0)
            before = clock.now()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert clock.now() == before
        assert tool.started == 3 and tool.cancelled == 3  # the two waiting calls never started
        assert _others() == set()

    asyncio.run(main())


# --- KeyboardInterrupt and SystemExit ------------------------------------------------------------

@pytest.fixture
def collect_interrupted_tasks():
    """An interrupt leaves its asyncio Task unretrieved; finalize it now, inside this test.

    Otherwise its "Task exception was never retrieved" finalizer runs at some later
    garbage collection, possibly in the middle of another module's import.
    """
    yield
    gc.collect()


def _raiser(exc_type: type[BaseException], is_async: bool):
    calls = []

    def sync_tool(*args, **kwargs):
        calls.append(1)
        raise exc_type("用户按下了 Ctrl-C" if exc_type is KeyboardInterrupt else 3)

    async def async_tool(*args, **kwargs):
        return sync_tool()

    return (async_tool if is_async else sync_tool), calls


INTERRUPTS = [pytest.param(exc, is_async, timeout, id=f"{exc.__name__}-{'async' if is_async else 'sync'}-"
                           f"{'timeout' if timeout else 'direct'}")
              for exc in (KeyboardInterrupt, SystemExit) for is_async in (False, True)
              for timeout in (None, 5.0) if is_async or timeout is None]


@pytest.mark.parametrize("exc_type,is_async,attempt_timeout", INTERRUPTS)
def test_interrupt_from_tool_is_not_swallowed_or_retried_by_call_tool_with_retry(
        collect_interrupted_tasks, exc_type, is_async, attempt_timeout) -> None:
    tool, calls = _raiser(exc_type, is_async)
    policy = RetryPolicy(max_retries=5, attempt_timeout=attempt_timeout)
    with use_clock(SimulatedClock(seed=0)), pytest.raises(exc_type):
        asyncio.run(call_tool_with_retry(tool, policy=policy))
    assert len(calls) == 1


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_interrupt_from_tool_is_not_swallowed_by_execute(collect_interrupted_tasks, exc_type, is_async) -> None:
    tool, calls = _raiser(exc_type, is_async)
    executor = ToolExecutor(policy=RetryPolicy(max_retries=5, attempt_timeout=5.0))
    with use_clock(SimulatedClock(seed=0)), pytest.raises(exc_type):
        asyncio.run(executor.execute(tool, "boom"))
    assert len(calls) == 1
    assert executor.get_summary()["total_calls"] == 0


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_interrupt_from_one_tool_stops_the_whole_batch(collect_interrupted_tasks, exc_type) -> None:
    tool, calls = _raiser(exc_type, is_async=True)
    registry = ToolRegistry([Tool("boom", tool, "中断", SCHEMA)])
    executor = ToolExecutor(registry=registry, concurrency=1)
    batch = [{"id": f"c{i}", "function": {"name": "boom", "arguments": "{}"}} for i in range(3)]
    with use_clock(SimulatedClock(seed=0)), pytest.raises(exc_type):
        asyncio.run(executor.run_tool_calls(batch))
    assert len(calls) == 1   # neither retried nor run for the next call of the batch


def test_interrupt_from_tool_reaches_the_caller_of_run_agent(collect_interrupted_tasks) -> None:
    pytest.importorskip("toolkit.agent")
    from support import scripted_client
    from toolkit.agent import run_agent

    tool, calls = _raiser(KeyboardInterrupt, is_async=False)
    registry = ToolRegistry([Tool("boom", tool, "中断", SCHEMA)])
    client, _ = scripted_client([{"tool_calls": [("boom", "{}")]}, {"content": "不应走到这里"}])
    with use_clock(SimulatedClock(seed=0)), pytest.raises(KeyboardInterrupt):
        run_agent("随便问问", client=client, model="scripted", registry=registry,
                  executor=ToolExecutor(registry=registry))
    assert len(calls) == 1
