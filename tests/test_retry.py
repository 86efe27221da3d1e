"""Tests for toolkit.retry: which errors are retried, the exact seeded waits, timeouts, deadline, budget."""
from __future__ import annotations

import asyncio
import gc
import logging
import random

import httpx2
import openai
import pytest

from toolkit import (Backoff, HTTPStatusError, PartialResult, RetryBudget, RetryPolicy, SimulatedClock,
                     call_tool_with_retry, inject_faults, use_clock)
from toolkit.retry import retry_call
from support import Flaky


def run(coro):
    return asyncio.run(coro)


class AlwaysFails:
    def __init__(self, make_error) -> None:
        self.make_error = make_error
        self.calls = 0

    def __call__(self):
        self.calls += 1
        raise self.make_error()


def expected_waits(jitter: str, seed: int, retries: int, base: float, factor: float, cap: float) -> list[float]:
    """The AWS "Exponential Backoff and Jitter" formulas, written out on their own, drawn from Random(seed)."""
    rng = random.Random(seed)
    waits: list[float] = []
    sleep = base
    for attempt in range(retries):
        ceiling = min(cap, base * factor ** attempt)
        if jitter == "none":
            waits.append(ceiling)
        elif jitter == "full":
            waits.append(rng.uniform(0, ceiling))
        elif jitter == "equal":
            waits.append(ceiling / 2 + rng.uniform(0, ceiling / 2))
        else:  # decorrelated: sleep = min(cap, random_between(base, sleep * 3))
            sleep = min(cap, rng.uniform(base, sleep * 3))
            waits.append(sleep)
    return waits


# --- what is retried ----------------------------------------------------------------------------------

def test_success_returns_the_result_and_no_error(sim_clock):
    outcome = run(call_tool_with_retry(Flaky(value={"temp": 25})))
    result, error = outcome
    assert result == {"temp": 25} and error is None
    assert outcome.result == result and outcome.error is None
    assert [a.outcome for a in outcome.trace] == ["ok"]
    assert outcome.gave_up is None and outcome.info is None


def test_arguments_reach_the_tool(sim_clock):
    tool = Flaky()
    run(call_tool_with_retry(tool, "Python MCP", limit=3))
    assert tool.args == (("Python MCP",), {"limit": 3})


def test_permission_error_is_tried_exactly_once(sim_clock):
    tool = AlwaysFails(lambda: PermissionError("denied"))
    result, error = run(call_tool_with_retry(tool, max_retries=5))
    assert tool.calls == 1
    assert result is None and "权限不足" in error
    assert sim_clock.sleeps == []


@pytest.mark.parametrize("exc", [ValueError("bad"), TypeError("bad"), FileNotFoundError("x.csv"),
                                 HTTPStatusError(401), HTTPStatusError(404), RuntimeError("unknown")])
def test_fatal_errors_are_not_retried(sim_clock, exc):
    tool = Flaky(exc)
    outcome = run(call_tool_with_retry(tool))
    assert tool.calls == 1
    assert outcome.gave_up == "fatal"
    assert outcome.info.error_type == "fatal"


@pytest.mark.parametrize("exc", [TimeoutError("slow"), ConnectionResetError("reset"), HTTPStatusError(500),
                                 HTTPStatusError(503), HTTPStatusError(429)])
def test_retryable_errors_are_retried_until_success(sim_clock, exc):
    tool = Flaky(exc, exc, value="done")
    outcome = run(call_tool_with_retry(tool))
    assert outcome == ("done", None)
    assert tool.calls == 3
    assert [a.outcome for a in outcome.trace][-1] == "ok"


def test_gives_up_after_max_retries_and_says_how_often_it_tried(sim_clock):
    tool = AlwaysFails(lambda: TimeoutError("slow"))
    outcome = run(call_tool_with_retry(tool, max_retries=3))
    result, error = outcome
    assert tool.calls == 4  # one try + 3 retries
    assert result is None
    assert "共尝试 4 次" in error and "已重试 3 次" in error
    assert outcome.gave_up == "max_retries"
    assert len(outcome.waits) == 3  # no wait after the last attempt
    assert outcome.trace[-1].wait_after == 0.0


def test_zero_retries_means_one_attempt(sim_clock):
    tool = AlwaysFails(lambda: TimeoutError("slow"))
    run(call_tool_with_retry(tool, max_retries=0))
    assert tool.calls == 1


def test_async_tools_are_awaited(sim_clock):
    calls = []

    async def tool(query):
        calls.append(query)
        await sim_clock.sleep(0.5)
        if len(calls) < 2:
            raise ConnectionError("reset")
        return f"结果: {query}"

    outcome = run(call_tool_with_retry(tool, "天气"))
    assert outcome == ("结果: 天气", None)
    assert calls == ["天气", "天气"]
    assert outcome.trace[0].duration == 0.5


def test_retryable_error_envelope_is_retried_and_returned_at_the_end(sim_clock):
    envelope = {"status": "error", "error": "上游忙", "retryable": True}
    tool = Flaky(value=envelope)
    result, error = run(call_tool_with_retry(tool, max_retries=2))
    assert tool.calls == 3
    assert result == envelope and "上游忙" in error


def test_fatal_error_envelope_is_returned_after_one_try(sim_clock):
    envelope = {"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到文件"}}
    tool = Flaky(value=envelope)
    outcome = run(call_tool_with_retry(tool))
    assert tool.calls == 1
    assert outcome.result == envelope and outcome.info.error_code == "FILE_NOT_FOUND"


def test_partial_result_is_a_success_with_a_partial_outcome(sim_clock):
    partial = PartialResult({"上海": "晴"}, "北京缺失")
    outcome = run(call_tool_with_retry(Flaky(value=partial)))
    assert outcome == (partial, None)
    assert outcome.trace[0].outcome == "partial"


def test_on_attempt_sees_every_attempt(sim_clock):
    seen = []
    run(call_tool_with_retry(Flaky(TimeoutError(), value=1), on_attempt=seen.append))
    assert [a.outcome for a in seen] == ["timeout", "ok"]


@pytest.mark.parametrize("max_retries", [3, 0, -1, 1.5, True])
def test_max_retries_beside_a_policy_is_refused_one_way_per_setting(sim_clock, max_retries):
    tool = AlwaysFails(TimeoutError)
    with pytest.raises(ValueError, match="max_retries 和 policy 只能给一个"):
        run(call_tool_with_retry(tool, max_retries=max_retries, policy=RetryPolicy(max_retries=0)))
    assert tool.calls == 0
    run(call_tool_with_retry(tool, policy=RetryPolicy(max_retries=1)))  # the policy alone: its own count
    assert tool.calls == 2


def test_executor_refuses_max_retries_beside_a_policy_in_chinese():
    from toolkit import ToolExecutor

    with pytest.raises(ValueError, match="max_retries 和 policy 只能给一个") as caught:
        ToolExecutor(max_retries=5, policy=RetryPolicy(max_retries=2))
    assert "RetryPolicy(max_retries=5" in str(caught.value)  # says how to write it instead
    assert ToolExecutor(policy=RetryPolicy(max_retries=2)).max_retries == 2
    assert ToolExecutor(max_retries=5).policy.max_retries == 5 and ToolExecutor().max_retries == 3


def test_what_the_model_reads_of_a_time_is_rounded():
    from toolkit import wording

    assert wording.attempt_timed_out(0.957383) == "单次调用超过 0.96 秒未返回，已取消"
    assert wording.attempt_timed_out(4.9567) == "单次调用超过 5 秒未返回，已取消"
    assert "12.3 秒" in wording.attempt_timed_out(12.34)
    assert "总时限 7.5 秒" in wording.gave_up("超时", 3, "deadline", 7.4567)
    assert "30 秒" in wording.circuit_open("t", 30.0)


def test_a_timeout_cut_by_the_deadline_reads_as_a_rounded_number(sim_clock):
    async def hang():
        await asyncio.sleep(0)
        await sim_clock.sleep(100)

    outcome = run(call_tool_with_retry(hang, policy=RetryPolicy(max_retries=3, attempt_timeout=5, deadline=7.04272)))
    import re

    shown = [re.search(r"单次调用超过 (\S+) 秒", a.message).group(1) for a in outcome.trace]
    assert shown[0] == "5" and len(shown) == 2, shown
    assert re.fullmatch(r"[0-9]\.[0-9]", shown[1]), shown   # what was left of the deadline, 1 decimal


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_max_retries_is_refused(bad):
    with pytest.raises(ValueError):
        run(call_tool_with_retry(Flaky(), max_retries=bad))


# --- the exact waits --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 7, 2024])
@pytest.mark.parametrize("jitter", ["none", "full", "equal", "decorrelated"])
def test_wait_sequence_is_exact_for_a_seed(jitter, seed):
    backoff = Backoff(base=0.5, factor=2.0, cap=4.0, jitter=jitter)
    policy = RetryPolicy(max_retries=6, backoff=backoff)
    expected = expected_waits(jitter, seed, 6, base=0.5, factor=2.0, cap=4.0)
    with use_clock(SimulatedClock(seed=seed)) as clock:
        outcome = run(call_tool_with_retry(AlwaysFails(lambda: TimeoutError("slow")), policy=policy))
    assert [a.wait_after for a in outcome.trace] == expected + [0.0]
    assert clock.sleeps == expected
    assert clock.now() == pytest.approx(sum(expected), abs=1e-12)
    assert outcome.elapsed == pytest.approx(sum(expected), abs=1e-12)


@pytest.mark.parametrize("jitter", ["none", "full", "equal", "decorrelated"])
def test_schedule_previews_the_waits_of_a_real_run(jitter):
    backoff = Backoff(base=1.0, cap=10.0, jitter=jitter)
    with use_clock(SimulatedClock(seed=42)):
        outcome = run(call_tool_with_retry(AlwaysFails(lambda: ConnectionError()),
                                           policy=RetryPolicy(max_retries=5, backoff=backoff)))
    assert backoff.schedule(5, seed=42) == outcome.waits


def test_no_jitter_doubles_up_to_the_cap():
    assert Backoff(base=1, factor=2, cap=5, jitter="none").schedule(5) == [1, 2, 4, 5, 5]


@pytest.mark.parametrize("jitter", ["full", "equal", "decorrelated"])
def test_jittered_waits_stay_within_their_bounds(jitter):
    backoff = Backoff(base=1, cap=8, jitter=jitter)
    for seed in range(50):
        waits = backoff.schedule(6, seed=seed)
        for n, wait in enumerate(waits):
            ceiling = min(8, 2 ** n)
            if jitter == "full":
                assert 0 <= wait <= ceiling
            elif jitter == "equal":
                assert ceiling / 2 <= wait <= ceiling
            else:
                assert 1 <= wait <= 8


def test_different_seeds_give_different_jitter():
    backoff = Backoff(jitter="full")
    assert backoff.schedule(4, seed=1) != backoff.schedule(4, seed=2)


def test_attempt_records_line_up_with_the_waits(sim_clock):
    async def tool():
        await sim_clock.sleep(0.25)
        raise TimeoutError("slow")

    outcome = run(call_tool_with_retry(tool, max_retries=3))
    attempts = outcome.trace
    assert [a.number for a in attempts] == [1, 2, 3, 4]
    assert all(a.duration == pytest.approx(0.25) for a in attempts)
    for before, after in zip(attempts, attempts[1:]):
        assert after.start == pytest.approx(before.end + before.wait_after)
    assert all(a.outcome == "timeout" and a.error_type == "retryable" and a.error_code == "TIMEOUT" for a in attempts)


@pytest.mark.parametrize("factor", [2, 3, 10.0])
def test_ceiling_never_overflows(factor):
    assert Backoff(cap=30, factor=factor).ceiling(10_000) == 30
    assert Backoff(cap=30, factor=factor, jitter="none").worst_case(1000) == pytest.approx(30 * 1000, rel=0.01)
    assert Backoff(base=0, cap=30, factor=factor).ceiling(10_000) == 0


@pytest.mark.parametrize("kwargs", [{"jitter": "random"}, {"factor": 0.5}, {"base": -1}, {"cap": -1}])
def test_bad_backoff_is_refused(kwargs):
    with pytest.raises(ValueError):
        Backoff(**kwargs)


def test_backoff_prints_its_formula():
    assert "uniform(0, min(cap, base·factor^n))" in str(Backoff(jitter="full"))


# --- Retry-After -------------------------------------------------------------------------------------------

def test_retry_after_header_is_honoured(sim_clock):
    tool = AlwaysFails(lambda: HTTPStatusError(429, headers={"Retry-After": "7"}))
    policy = RetryPolicy(max_retries=3, backoff=Backoff(base=1, jitter="none"))
    outcome = run(call_tool_with_retry(tool, policy=policy))
    assert outcome.waits == [7, 7, 7]


def test_longer_backoff_wins_over_a_short_retry_after(sim_clock):
    tool = AlwaysFails(lambda: HTTPStatusError(503, headers={"Retry-After": "1"}))
    policy = RetryPolicy(max_retries=3, backoff=Backoff(base=1, jitter="none"))
    assert run(call_tool_with_retry(tool, policy=policy)).waits == [1, 2, 4]


def test_openai_rate_limit_retry_after_ms_is_honoured(sim_clock):
    request = httpx2.Request("POST", "https://api.example.test/v1/chat/completions")

    def rate_limited():
        response = httpx2.Response(429, headers={"retry-after-ms": "1500"}, request=request)
        return openai.RateLimitError("slow down", response=response, body=None)

    outcome = run(call_tool_with_retry(AlwaysFails(rate_limited), max_retries=4))
    assert len(outcome.waits) == 4
    assert all(wait >= 1.5 for wait in outcome.waits)
    assert outcome.info.error_code == "RATE_LIMITED"


def test_retry_after_is_capped_by_the_policy(sim_clock):
    tool = AlwaysFails(lambda: HTTPStatusError(429, headers={"Retry-After": "3600"}))
    policy = RetryPolicy(max_retries=1, max_retry_after=60, backoff=Backoff(jitter="none"))
    assert run(call_tool_with_retry(tool, policy=policy)).waits == [60]


def test_retry_after_can_be_ignored(sim_clock):
    tool = AlwaysFails(lambda: HTTPStatusError(429, headers={"Retry-After": "30"}))
    policy = RetryPolicy(max_retries=2, respect_retry_after=False, backoff=Backoff(jitter="none"))
    assert run(call_tool_with_retry(tool, policy=policy)).waits == [1, 2]


def test_faulty_rate_limit_carries_its_retry_after(sim_clock):
    tool = inject_faults(lambda: "ok", plan=["rate_limit", "ok"], retry_after=5)
    outcome = run(call_tool_with_retry(tool, policy=RetryPolicy(backoff=Backoff(jitter="full"))))
    assert outcome == ("ok", None)
    assert outcome.waits[0] >= 5


# --- timeouts and the deadline --------------------------------------------------------------------------------

def test_a_hanging_attempt_is_cut_by_the_attempt_timeout(sim_clock):
    tool = inject_faults(lambda: "finally", plan=["hang", "hang", "ok"], latency=0.1)
    policy = RetryPolicy(attempt_timeout=2.0, backoff=Backoff(jitter="none"))
    outcome = run(call_tool_with_retry(tool, policy=policy))
    assert outcome == ("finally", None)
    assert [a.outcome for a in outcome.trace] == ["timeout", "timeout", "ok"]
    assert [a.duration for a in outcome.trace[:2]] == [2.0, 2.0]
    assert sim_clock.now() == pytest.approx(2 + 1 + 2 + 2 + 0.1)


def test_a_slow_async_tool_is_cancelled_at_the_timeout(sim_clock):
    cancelled = []

    async def slow():
        try:
            await sim_clock.sleep(100)
        except asyncio.CancelledError:
            cancelled.append(sim_clock.now())
            raise
        return "late"

    outcome = run(call_tool_with_retry(slow, policy=RetryPolicy(max_retries=0, attempt_timeout=3)))
    assert outcome.result is None and "超过 3 秒" in outcome.error
    assert cancelled == [3.0]


def test_overall_deadline_stops_retrying(sim_clock):
    tool = inject_faults(lambda: "never", plan=["hang"] * 10)
    policy = RetryPolicy(max_retries=10, attempt_timeout=5, deadline=12, backoff=Backoff(jitter="none"))
    outcome = run(call_tool_with_retry(tool, policy=policy))
    assert outcome.result is None
    assert outcome.gave_up == "deadline"
    assert "总时限 12 秒" in outcome.error
    assert outcome.elapsed <= 12
    assert len(outcome.trace) == 2  # 0-5, wait 1, 6-11, then a 2 s wait would pass 12


def test_deadline_also_limits_a_single_attempt(sim_clock):
    tool = inject_faults(lambda: "never", plan=["hang"])
    outcome = run(call_tool_with_retry(tool, policy=RetryPolicy(deadline=3)))
    assert outcome.trace[0].duration == 3
    assert outcome.gave_up == "deadline"
    assert sim_clock.now() == 3


def test_fast_tool_is_not_disturbed_by_the_timeout(sim_clock):
    async def quick():
        await sim_clock.sleep(0.5)
        return "fast"

    assert run(call_tool_with_retry(quick, policy=RetryPolicy(attempt_timeout=1))) == ("fast", None)


@pytest.mark.parametrize("kwargs", [{"attempt_timeout": 0}, {"deadline": -1}, {"attempt_timeout": "5"}])
def test_bad_timeouts_are_refused(kwargs):
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)


def test_worst_case_adds_every_timeout_and_the_longest_waits():
    policy = RetryPolicy(max_retries=3, attempt_timeout=2, backoff=Backoff(base=1, cap=30, jitter="full"))
    assert policy.worst_case() == 4 * 2 + (1 + 2 + 4)
    assert policy.fits(15) is True
    assert policy.fits(14.9) is False
    assert policy.fits() is True  # no deadline: anything fits
    assert policy.with_(deadline=10).fits() is False


def test_decorrelated_worst_case_bounds_every_seed():
    backoff = Backoff(base=1, cap=30, jitter="decorrelated")
    assert backoff.worst_case(3) == 3 + 9 + 27
    assert max(sum(backoff.schedule(3, seed=s)) for s in range(200)) <= backoff.worst_case(3)


def test_with_returns_a_changed_copy():
    policy = RetryPolicy()
    other = policy.with_(max_retries=1)
    assert (policy.max_retries, other.max_retries) == (3, 1)


# --- writes are not retried after a timeout -------------------------------------------------------------------------

@pytest.mark.parametrize("exc", [TimeoutError("slow"), ConnectionError("dropped"), HTTPStatusError(500)])
def test_non_idempotent_policy_does_not_retry_what_may_have_happened(sim_clock, exc):
    tool = Flaky(exc)
    outcome = run(call_tool_with_retry(tool, policy=RetryPolicy(idempotent=False)))
    assert tool.calls == 1
    assert outcome.gave_up == "not_idempotent"
    assert "写操作" in outcome.error


@pytest.mark.parametrize("status", [429, 503])
def test_non_idempotent_policy_still_retries_refused_requests(sim_clock, status):
    tool = Flaky(HTTPStatusError(status), value="written")
    assert run(call_tool_with_retry(tool, policy=RetryPolicy(idempotent=False))) == ("written", None)
    assert tool.calls == 2


# --- retry budget ----------------------------------------------------------------------------------------------------

def test_empty_budget_stops_retries(sim_clock):
    budget = RetryBudget(capacity=10, retry_cost=5)
    tool = AlwaysFails(lambda: ConnectionError("down"))
    outcome = run(call_tool_with_retry(tool, max_retries=5, budget=budget))
    assert tool.calls == 3  # two retries cost 10 tokens, the third is denied
    assert outcome.gave_up == "budget"
    assert "额度" in outcome.error
    assert budget.tokens == 0 and budget.denied == 1


def test_timeouts_cost_more_budget(sim_clock):
    budget = RetryBudget(capacity=10, retry_cost=5, timeout_cost=10)
    tool = AlwaysFails(lambda: TimeoutError("slow"))
    run(call_tool_with_retry(tool, max_retries=5, budget=budget))
    assert tool.calls == 2


def test_budget_is_shared_and_refunded_on_success(sim_clock):
    budget = RetryBudget(capacity=10, retry_cost=5, success_refund=1)
    run(call_tool_with_retry(AlwaysFails(lambda: ConnectionError()), max_retries=5, budget=budget))
    assert budget.tokens == 0
    assert run(call_tool_with_retry(Flaky(value="ok"), budget=budget)) == ("ok", None)
    assert budget.tokens == 1
    for _ in range(20):
        run(call_tool_with_retry(Flaky(value="ok"), budget=budget))
    assert budget.tokens == 10  # never above capacity


def test_budget_never_stops_the_first_attempt(sim_clock):
    budget = RetryBudget(capacity=0)
    tool = Flaky(value="ok")
    assert run(call_tool_with_retry(tool, budget=budget)) == ("ok", None)


# --- never swallow the user's Ctrl-C, exit or cancellation -----------------------------------------------------

@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_interrupts_from_sync_tools_propagate_at_once(sim_clock, exc_type):
    tool = AlwaysFails(exc_type)
    with pytest.raises(exc_type):
        run(call_tool_with_retry(tool))
    assert tool.calls == 1


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_interrupts_from_async_tools_propagate(sim_clock, caplog, exc_type, timeout):
    calls = []

    async def tool():
        calls.append(1)
        raise exc_type()

    with pytest.raises(exc_type):
        run(call_tool_with_retry(tool, policy=RetryPolicy(attempt_timeout=timeout)))
    assert calls == [1]
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
    assert "never retrieved" not in caplog.text  # the interrupted attempt leaves no noise on stderr


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_cancelled_error_from_a_tool_is_not_retried(sim_clock, timeout):
    calls = []

    async def tool():
        calls.append(1)
        raise asyncio.CancelledError()

    async def main():
        return await call_tool_with_retry(tool, policy=RetryPolicy(attempt_timeout=timeout))

    with pytest.raises(asyncio.CancelledError):
        run(main())
    assert calls == [1]


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_cancelling_the_caller_cancels_the_retry_loop(sim_clock, timeout):
    tool = inject_faults(lambda: "x", plan=["timeout"] * 3 + ["hang"])

    async def main():
        task = asyncio.ensure_future(call_tool_with_retry(tool, policy=RetryPolicy(attempt_timeout=timeout)))
        await sim_clock.sleep(0.5)  # inside an attempt or a backoff wait
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        calls = len(tool.calls)
        await sim_clock.sleep(100)  # time enough for every retry, had the loop survived
        return calls

    calls_at_cancel = run(main())
    assert calls_at_cancel >= 1
    assert len(tool.calls) == calls_at_cancel


# --- settings apart from the tool's arguments (issue 8.8) ---------------------------------------------

def test_a_tool_argument_named_tool_fn_reaches_the_tool(sim_clock):
    def tool(tool_fn: str) -> str:
        return f"got {tool_fn}"
    assert run(call_tool_with_retry(tool, tool_fn="a")) == ("got a", None)


def test_retry_call_reserves_no_keyword_names(sim_clock):
    def tool(max_retries: int, on_attempt: str) -> str:
        return f"{max_retries}-{on_attempt}"
    result, error = run(retry_call(RetryPolicy(), tool, (), {"max_retries": 7, "on_attempt": "x"}))
    assert (result, error) == ("7-x", None)


def test_original_call_shape_still_works(sim_clock):
    def add(a, b, *, scale=1):
        return (a + b) * scale
    result, error = run(call_tool_with_retry(add, 2, 3, max_retries=3, scale=10))
    assert (result, error) == (50, None)


def test_retry_outcome_is_frozen_and_still_a_pair(sim_clock):
    import copy
    import typing

    from toolkit.retry import RetryOutcome
    outcome = run(call_tool_with_retry(Flaky(TimeoutError(), value=5)))
    result, error = outcome
    assert (result, error) == (5, None) and outcome == (5, None) and len(outcome) == 2
    with pytest.raises(AttributeError):
        outcome.trace = ()
    with pytest.raises(AttributeError):
        outcome.gave_up = "x"
    assert isinstance(outcome.trace, tuple) and len(outcome.trace) == 2 and outcome.attempts == 2
    hints = typing.get_type_hints(RetryOutcome)  # visible to type checkers, not set behind their back
    assert {"trace", "info", "gave_up", "elapsed"} <= set(hints)
    clone = copy.deepcopy(outcome)
    assert clone == outcome and clone.trace == outcome.trace


def test_retry_loop_writes_no_chinese_sentence_itself():
    import inspect as _inspect
    import re

    import toolkit.retry
    source = _inspect.getsource(toolkit.retry)
    assert not re.search(r"[\u4e00-\u9fff]", source)


def test_give_up_wording_comes_from_the_wording_module(sim_clock, monkeypatch):
    from toolkit import wording
    monkeypatch.setattr(wording, "gave_up", lambda message, attempts, why, deadline: f"<{attempts}:{why}>")
    _, error = run(call_tool_with_retry(AlwaysFails(TimeoutError), max_retries=1))
    assert error == "<2:max_retries>"
