"""Tests for toolkit.clock: the simulated clock's scheduling, its records, and installing clocks."""
from __future__ import annotations

import asyncio
import math
import random
import time

import pytest

from toolkit import SimulatedClock, get_clock, use_clock
from toolkit.clock import RealClock, set_clock


def test_simulated_sleep_takes_no_real_time_and_moves_simulated_time():
    clock = SimulatedClock()
    started = time.perf_counter()
    asyncio.run(clock.sleep(3600))
    assert time.perf_counter() - started < 1.0
    assert clock.now() == 3600
    assert clock.sleeps == [3600]


def test_simulated_clock_starts_where_asked():
    assert SimulatedClock(start=10.0).now() == 10.0


def test_concurrent_sleepers_overlap_instead_of_adding_up():
    clock = SimulatedClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now()))

    async def main() -> None:
        await asyncio.gather(sleeper("c", 3), sleeper("a", 1), sleeper("b", 2), sleeper("a2", 1))

    asyncio.run(main())
    assert clock.now() == 3
    assert sorted(woke, key=lambda w: w[1]) == woke  # woken in time order
    assert dict(woke) == {"a": 1, "a2": 1, "b": 2, "c": 3}


def test_sequential_sleeps_add_up():
    clock = SimulatedClock()

    async def main() -> None:
        for seconds in (0.5, 1.5, 2.0):
            await clock.sleep(seconds)

    asyncio.run(main())
    assert clock.now() == 4.0
    assert clock.sleeps == [0.5, 1.5, 2.0]


def test_sleeps_are_recorded_in_the_order_asked():
    clock = SimulatedClock()

    async def main() -> None:
        await asyncio.gather(clock.sleep(2), clock.sleep(1), clock.sleep(0))

    asyncio.run(main())
    assert clock.sleeps == [2, 1, 0]


def test_negative_sleep_counts_as_zero():
    clock = SimulatedClock()
    asyncio.run(clock.sleep(-5))
    assert clock.now() == 0
    assert clock.sleeps == [0.0]


@pytest.mark.parametrize("clock", [SimulatedClock(), RealClock()], ids=["simulated", "real"])
def test_nan_sleep_is_refused_instead_of_hanging(clock):
    with pytest.raises(ValueError, match="NaN"):
        asyncio.run(asyncio.wait_for(clock.sleep(math.nan), 5))


def test_ready_work_runs_before_the_clock_jumps():
    """A task that is ready (not sleeping) finishes its work at the current simulated time."""
    clock = SimulatedClock()
    seen: list[float] = []

    async def busy() -> None:
        for _ in range(50):
            await asyncio.sleep(0)  # ready again at once: no simulated time passes
        seen.append(clock.now())

    async def main() -> None:
        await asyncio.gather(clock.sleep(10), busy())

    asyncio.run(main())
    assert seen == [0.0]
    assert clock.now() == 10


def test_a_cancelled_sleeper_does_not_move_time():
    clock = SimulatedClock()

    async def main() -> float:
        long = asyncio.ensure_future(clock.sleep(100))
        await clock.sleep(1)
        long.cancel()
        await asyncio.sleep(0)
        await clock.sleep(1)
        return clock.now()

    assert asyncio.run(main()) == 2


def test_timeout_on_a_simulated_sleep_fires_at_the_simulated_time():
    clock = SimulatedClock()

    async def main() -> None:
        timer = asyncio.ensure_future(clock.sleep(5))
        work = asyncio.ensure_future(clock.sleep(60))
        done, _ = await asyncio.wait({timer, work}, return_when=asyncio.FIRST_COMPLETED)
        assert done == {timer}
        work.cancel()

    asyncio.run(main())
    assert clock.now() == 5


def test_infinite_sleep_only_ends_by_cancellation():
    clock = SimulatedClock()

    async def main() -> None:
        hang = asyncio.ensure_future(clock.sleep(math.inf))
        await clock.sleep(1000)
        assert not hang.done()
        hang.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hang

    asyncio.run(main())
    assert clock.now() == 1000


def test_one_clock_works_across_several_event_loops():
    clock = SimulatedClock()
    asyncio.run(clock.sleep(1))
    asyncio.run(clock.sleep(2))
    assert clock.now() == 3


def test_advance_moves_time_by_hand_and_refuses_going_back():
    clock = SimulatedClock()
    clock.advance(2.5)
    assert clock.now() == 2.5
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.advance(math.nan)
    assert clock.now() == 2.5


def test_seeded_random_repeats():
    a, b = SimulatedClock(seed=7), SimulatedClock(seed=7)
    assert [a.random.random() for _ in range(5)] == [b.random.random() for _ in range(5)]
    assert SimulatedClock(seed=8).random.random() != SimulatedClock(seed=7).random.random()


def test_real_clock_uses_monotonic_time_and_asyncio_sleep(monkeypatch):
    asked: list[float] = []

    async def fake_sleep(seconds):
        asked.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)  # no real sleeping in the suite
    monkeypatch.setattr(time, "monotonic", lambda: 123.5)
    clock = RealClock()
    asyncio.run(clock.sleep(2.5))
    asyncio.run(clock.sleep(-1))
    assert asked == [2.5, 0.0]
    assert clock.now() == 123.5


def test_default_clock_is_real():
    assert isinstance(get_clock(), RealClock)


def test_use_clock_installs_and_restores():
    before = get_clock()
    with use_clock(SimulatedClock(seed=3)) as clock:
        assert get_clock() is clock
    assert get_clock() is before


def test_use_clock_without_argument_makes_a_simulated_clock():
    with use_clock() as clock:
        assert isinstance(clock, SimulatedClock)
        assert get_clock() is clock


def test_use_clock_restores_even_when_the_block_raises():
    before = get_clock()
    with pytest.raises(RuntimeError):
        with use_clock(SimulatedClock()):
            raise RuntimeError("boom")
    assert get_clock() is before


def test_nested_use_clock_restores_each_level():
    outer, inner = SimulatedClock(), SimulatedClock()
    with use_clock(outer):
        with use_clock(inner):
            assert get_clock() is inner
        assert get_clock() is outer


def test_set_clock_returns_the_old_one_and_none_means_real():
    original = get_clock()
    clock = SimulatedClock()
    try:
        assert set_clock(clock) is original
        assert set_clock(None) is clock
        assert isinstance(get_clock(), RealClock)
    finally:
        set_clock(original)


def test_sim_clock_fixture_installs_a_seeded_simulated_clock(sim_clock):
    assert get_clock() is sim_clock
    assert isinstance(sim_clock, SimulatedClock)
    assert sim_clock.now() == 0.0
    assert sim_clock.random.random() == random.Random(0).random()


# --- one clock for every waiting piece (issue 8.1) ---------------------------------------------------

def _timed_faulty_call(executor_clock=None):
    """(real seconds, FaultyTool, ToolResult) for a tool with 1 s latency that times out twice."""
    import time as _time

    from toolkit import ToolExecutor, inject_faults

    async def search(q: str) -> str:
        return f"结果：{q}"

    flaky = inject_faults(search, ["timeout", "timeout", "ok"], latency=1.0)
    executor = ToolExecutor(max_retries=3, clock=executor_clock)
    began = _time.perf_counter()
    result = asyncio.run(executor.execute(flaky, "search", "x"))
    return _time.perf_counter() - began, flaky, result


def _assert_fault_and_attempt_times_agree(flaky, result) -> None:
    assert result.ok and result.attempts == 3
    assert [(c.start, c.end) for c in flaky.calls] == [(a.start, a.end) for a in result.trace]
    assert [round(c.end - c.start, 9) for c in flaky.calls] == [1.0, 1.0, 1.0]


def test_executor_under_use_clock_with_fault_latency_takes_no_real_time_and_times_agree():
    with use_clock(SimulatedClock(seed=0)) as clock:
        real, flaky, result = _timed_faulty_call()
    assert real < 0.5  # three 1 s latencies plus two backoff waits, all simulated
    assert clock.now() >= 3.0
    _assert_fault_and_attempt_times_agree(flaky, result)


def test_executor_clock_parameter_also_governs_the_faulty_tools_latency():
    clock = SimulatedClock(seed=0)
    real, flaky, result = _timed_faulty_call(executor_clock=clock)
    assert real < 0.5
    assert 1.0 in clock.sleeps and clock.now() >= 3.0
    _assert_fault_and_attempt_times_agree(flaky, result)
    assert isinstance(get_clock(), RealClock)  # the override ended with the call


def test_use_clock_in_one_task_is_invisible_to_a_concurrent_task():
    mine = SimulatedClock()
    seen: dict[str, object] = {}

    async def main() -> None:
        entered, checked = asyncio.Event(), asyncio.Event()

        async def inside() -> None:
            with use_clock(mine):
                entered.set()
                await checked.wait()
                seen["inside"] = get_clock()

        async def outside() -> None:
            await entered.wait()
            seen["outside"] = get_clock()
            checked.set()
        await asyncio.gather(inside(), outside())
    asyncio.run(main())
    assert seen["inside"] is mine and seen["outside"] is not mine


def test_use_clock_holds_for_tasks_started_inside_the_block():
    async def main() -> object:
        with use_clock(SimulatedClock()) as clock:
            task = asyncio.create_task(asyncio.sleep(0, result=None))
            inner = asyncio.create_task(_current_clock())
            await task
            return clock, await inner
    clock, seen = asyncio.run(main())
    assert seen is clock


async def _current_clock() -> object:
    return get_clock()


def test_run_agent_from_a_running_loop_keeps_the_simulated_clock_for_tool_waits():
    from support import scripted_client

    from toolkit import ToolRegistry, inject_faults
    from toolkit.agent import run_agent

    async def lookup(q: str) -> str:
        return f"查到：{q}"
    registry = ToolRegistry()
    registry.register(inject_faults(lookup, ["timeout", "ok"], latency=5.0), name="lookup",
                      parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    client, _ = scripted_client([{"tool_calls": [("lookup", '{"q": "a"}')]}, {"content": "完成"}])

    async def cell():  # a notebook cell: run_agent is sync, called inside a running event loop
        return run_agent("查一下 a", client=client, model="scripted", registry=registry)
    with use_clock(SimulatedClock(seed=0)) as clock:
        import time as _time
        began = _time.perf_counter()
        run = asyncio.run(cell())
        real = _time.perf_counter() - began
    assert run.answer == "完成"
    assert clock.sleeps.count(5.0) == 2 and real < 5.0
    assert run.tool_results[0].duration_ms >= 10_000  # two 5 s latencies, in simulated milliseconds
