"""Tests for toolkit.faults: planned and seeded faults, and what each fault kind does."""
from __future__ import annotations

import asyncio

import pytest

from toolkit import HTTPStatusError, PartialResult, classify_error, inject_faults
from toolkit.faults import FAULTS


def run(coro):
    return asyncio.run(coro)


def weather(city: str = "上海") -> dict:
    return {"城市": city, "天气": "晴"}


async def call(tool, *args):
    """(value, None) or (None, exception) for one call."""
    try:
        return await tool(*args), None
    except Exception as exc:  # the faults under test are Exceptions
        return None, exc


@pytest.mark.parametrize("fault, exc_type, code, retryable", [
    ("timeout", TimeoutError, "TIMEOUT", True),
    ("connection", ConnectionResetError, "CONNECTION", True),
    ("rate_limit", HTTPStatusError, "RATE_LIMITED", True),
    ("server_error", HTTPStatusError, "SERVER_ERROR", True),
    ("unavailable", HTTPStatusError, "UNAVAILABLE", True),
    ("auth", HTTPStatusError, "UNAUTHORIZED", False),
    ("permission", PermissionError, "PERMISSION_DENIED", False),
    ("bad_args", ValueError, "INVALID_ARGUMENTS", False),
])
def test_each_failing_fault_raises_what_it_says(sim_clock, fault, exc_type, code, retryable):
    tool = inject_faults(weather, plan=[fault])
    value, exc = run(call(tool))
    assert value is None
    assert type(exc) is exc_type
    info = classify_error(exc)
    assert info.error_code == code
    assert info.retryable is retryable


def test_rate_limit_carries_retry_after(sim_clock):
    tool = inject_faults(weather, plan=["rate_limit"], retry_after=3.5)
    _, exc = run(call(tool))
    assert exc.status_code == 429
    assert classify_error(exc).retry_after == 3.5


def test_ok_fault_returns_the_real_result(sim_clock):
    tool = inject_faults(weather, plan=["ok"])
    assert run(call(tool, "北京")) == ({"城市": "北京", "天气": "晴"}, None)


def test_partial_fault_wraps_the_real_result(sim_clock):
    tool = inject_faults(weather, plan=["partial"])
    value, _ = run(call(tool))
    assert isinstance(value, PartialResult)
    assert value.data == {"城市": "上海", "天气": "晴"}
    assert value.missing


def test_hang_never_returns_until_cancelled(sim_clock):
    tool = inject_faults(weather, plan=["hang"])

    async def main():
        task = asyncio.ensure_future(tool())
        await sim_clock.sleep(3600)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert tool.calls[0].fault == "hang"
    assert tool.calls[0].end == 3600


def test_every_fault_kind_is_covered_by_these_tests():
    assert set(FAULTS) == {"ok", "timeout", "hang", "connection", "rate_limit", "server_error", "unavailable",
                           "auth", "permission", "bad_args", "partial"}


def test_async_tools_can_be_wrapped(sim_clock):
    async def slow_weather(city):
        await sim_clock.sleep(1)
        return city

    tool = inject_faults(slow_weather, plan=["ok"], latency=0.5)
    assert run(call(tool, "广州")) == ("广州", None)
    assert sim_clock.now() == 1.5


def test_latency_is_slept_on_the_simulated_clock(sim_clock):
    tool = inject_faults(weather, plan=["ok", "timeout"], latency=0.25)
    run(call(tool))
    run(call(tool))
    assert sim_clock.now() == 0.5
    assert [(c.number, c.start, c.end, c.fault) for c in tool.calls] == [(1, 0.0, 0.25, "ok"),
                                                                         (2, 0.25, 0.5, "timeout")]


def test_plan_runs_in_order_then_calls_succeed(sim_clock):
    tool = inject_faults(weather, plan=["timeout", "timeout", "ok"])

    async def main():
        return [type(exc).__name__ if exc else "ok" for _, exc in [await call(tool) for _ in range(5)]]

    assert run(main()) == ["TimeoutError", "TimeoutError", "ok", "ok", "ok"]


def _sequence(seed: int, n: int = 200) -> list[str]:
    tool = inject_faults(weather, rates={"timeout": 0.2, "rate_limit": 0.1, "server_error": 0.1}, seed=seed)
    return [tool.next_fault() for _ in range(n)]


def test_seeded_rates_give_the_same_sequence_every_run():
    assert _sequence(1) == _sequence(1)
    assert _sequence(1) != _sequence(2)


def test_seeded_rates_are_close_to_the_asked_rates():
    faults = _sequence(3, n=5000)
    assert faults.count("timeout") / 5000 == pytest.approx(0.2, abs=0.03)
    assert faults.count("ok") / 5000 == pytest.approx(0.6, abs=0.03)


def test_plan_and_rates_can_change_while_running(sim_clock):
    tool = inject_faults(weather)
    assert tool.next_fault() == "ok"
    tool.set_plan(["auth"])
    assert tool.next_fault() == "auth"
    tool.set_rates({"timeout": 1.0})
    assert tool.next_fault() == "timeout"


@pytest.mark.parametrize("kwargs", [{"plan": ["explode"]}, {"rates": {"explode": 0.1}},
                                    {"rates": {"timeout": 1.5}}, {"rates": {"timeout": 0.7, "auth": 0.7}},
                                    {"rates": {"timeout": -0.1}}])
def test_bad_plans_and_rates_are_refused(kwargs):
    with pytest.raises(ValueError):
        inject_faults(weather, **kwargs)


def test_wrapper_keeps_the_tool_name_and_doc():
    def lookup():
        """查天气。"""

    tool = inject_faults(lookup)
    assert tool.__name__ == "lookup"
    assert tool.__doc__ == "查天气。"
