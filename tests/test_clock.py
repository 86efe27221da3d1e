"""Tests for toolkit.clock: the simulated clock's scheduling, its records, and installing clocks."""
from __future__ import annotations

import asyncio
import math
import random
import time

import pytest

from toolkit import RealClock, SimulatedClock, get_clock, set_clock, use_clock


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
