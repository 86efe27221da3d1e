"""Hooks on the executor: frozen ToolEvents with the clock's time; a raising hook never breaks a call (issue 8.2)."""
from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from toolkit import ToolEvent, ToolExecutor, ToolRegistry, inject_faults


def run(coro):
    return asyncio.run(coro)


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


async def search(q: str) -> str:
    return f"结果：{q}"


def test_hooks_see_attempts_waits_and_the_end_with_clock_times(sim_clock):
    events: list[ToolEvent] = []
    flaky = inject_faults(search, ["timeout", "ok"], latency=1.0)
    executor = ToolExecutor(hooks=[events.append])
    result = run(executor.execute(flaky, "search", "x"))
    assert [e.kind for e in events] == ["attempt_start", "attempt_end", "wait", "attempt_start", "attempt_end",
                                        "call_end"]
    start1, end1, wait, start2, end2, done = events
    assert (start1.time, end1.time) == (0.0, 1.0) and end1.outcome == "timeout" and end1.error_code == "TIMEOUT"
    assert wait.wait == result.trace[0].wait_after > 0 and wait.time == 1.0
    assert start2.time == pytest.approx(1.0 + wait.wait) and start2.attempt == 2
    assert end2.outcome == "ok" and end2.record is result.trace[1]
    assert done.result is result and done.outcome == "success" and done.attempt == 2
    assert done.time == sim_clock.now()


def test_tool_events_are_frozen(sim_clock):
    events: list[ToolEvent] = []
    run(ToolExecutor(hooks=[events.append]).execute(lambda: 1, "one"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        events[0].time = 99.0


def test_hooks_added_after_construction_are_called(sim_clock):
    executor = ToolExecutor()
    kinds: list[str] = []
    executor.hooks.append(lambda e: kinds.append(e.kind))
    run(executor.execute(lambda: 1, "one"))
    assert kinds == ["attempt_start", "attempt_end", "call_end"]


def test_a_raising_hook_is_recorded_and_the_call_still_succeeds(sim_clock):
    def broken(event: ToolEvent) -> None:
        raise RuntimeError(f"chart broke on {event.kind}")
    seen: list[str] = []
    executor = ToolExecutor(hooks=[broken, lambda e: seen.append(e.kind)])
    result = run(executor.execute(lambda: 42, "answer"))
    assert result.ok and result.data == 42
    assert seen == ["attempt_start", "attempt_end", "call_end"]  # the next hook still ran
    assert [e.kind for e in executor.hook_errors] == ["attempt_start", "attempt_end", "call_end"]
    assert executor.hook_errors[0].hook.endswith("broken") and "chart broke" in executor.hook_errors[0].error


def test_a_raising_hook_does_not_fail_a_batch(sim_clock):
    registry = ToolRegistry()
    registry.register(search)
    executor = ToolExecutor(registry=registry)
    executor.hooks.append(lambda e: 1 / 0)
    executor.hooks.append(lambda e: e.result.no_such_attribute if e.kind == "call_end" else None)
    results = run(executor.run_tool_calls([call(f"c{i}", "search", {"q": str(i)}) for i in range(5)]))
    assert [r.status for r in results] == ["success"] * 5
    assert [r.data for r in results] == [f"结果：{i}" for i in range(5)]
    kinds = [e.kind for e in executor.hook_errors]
    assert kinds.count("call_end") == 10 and kinds.count("attempt_start") == 5


def test_an_async_hook_is_refused_without_a_never_awaited_warning(sim_clock, recwarn):
    async def hook(event: ToolEvent) -> None:
        pass
    executor = ToolExecutor(hooks=[hook])
    assert run(executor.execute(lambda: 1, "one")).ok
    assert executor.hook_errors and "async" in executor.hook_errors[0].error
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_keyboard_interrupt_in_a_hook_is_not_swallowed(sim_clock):
    def stop(event: ToolEvent) -> None:
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run(ToolExecutor(hooks=[stop]).execute(lambda: 1, "one"))


def test_refused_calls_end_with_a_call_end_event(sim_clock):
    events: list[ToolEvent] = []
    executor = ToolExecutor(hooks=[events.append])
    result = run(executor.run_tool_call(call("c1", "nope", {})))
    assert [e.kind for e in events] == ["call_end"]
    assert events[0].error_code == "UNKNOWN_TOOL" and events[0].call_id == "c1" and events[0].result is result


# --- the circuit breaker and the retry budget report what they do ---------------------------------------------------

def _kinds(events: list[ToolEvent], *kinds: str) -> list[ToolEvent]:
    return [e for e in events if e.kind in kinds]


def test_breaker_reports_each_change_of_state_and_each_refused_call(sim_clock):
    from toolkit import CircuitBreaker, RetryPolicy

    events: list[ToolEvent] = []
    down = inject_faults(search, ["connection", "connection", "ok"])
    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), hooks=[events.append],
                            breaker=CircuitBreaker(failure_threshold=2, cooldown=10))
    for _ in range(3):
        run(executor.execute(down, "search", "x"))
    opened, refused = _kinds(events, "breaker_state", "breaker_reject")
    assert (opened.kind, opened.previous, opened.state, opened.wait) == ("breaker_state", "closed", "open", 10)
    assert (refused.kind, refused.error_code, refused.fallback, refused.time) == ("breaker_reject", "CIRCUIT_OPEN", None,
                                                                             opened.time)
    sim_clock.advance(10)
    events.clear()
    trial = run(executor.execute(down, "search", "x"))
    assert trial.ok
    changes = [(e.previous, e.state, e.time) for e in _kinds(events, "breaker_state")]
    assert changes == [("open", "half_open", trial.started_at),
                       ("half_open", "closed", pytest.approx(trial.started_at + trial.duration_ms / 1000))]
    assert [e.kind for e in events][0] == "breaker_state"  # the trial is let through before its first attempt


def test_a_failed_trial_reports_half_open_to_open(sim_clock):
    from toolkit import CircuitBreaker, RetryPolicy

    events: list[ToolEvent] = []
    down = inject_faults(search, ["server_error"] * 5)
    executor = ToolExecutor(policy=RetryPolicy(max_retries=0), hooks=[events.append],
                            breaker=CircuitBreaker(failure_threshold=1, cooldown=5))
    run(executor.execute(down, "search", "x"))
    sim_clock.advance(5)
    run(executor.execute(down, "search", "x"))
    assert [(e.previous, e.state) for e in _kinds(events, "breaker_state")] == [
        ("closed", "open"), ("open", "half_open"), ("half_open", "open")]


def test_a_refused_call_names_the_fallback_that_answers(sim_clock):
    from toolkit import CircuitBreaker, RetryPolicy

    registry = ToolRegistry()

    def weather(city: str) -> str:
        raise ConnectionError("primary down")

    registry.register(weather, fallback="weather_backup")
    registry.register(lambda city: f"{city}: 晴", name="weather_backup",
                      parameters={"type": "object", "properties": {"city": {"type": "string"}}})
    events: list[ToolEvent] = []
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=0), hooks=[events.append],
                            breaker=CircuitBreaker(failure_threshold=1, cooldown=60))
    run(executor.run_tool_call(call("c1", "weather", {"city": "上海"})))
    result = run(executor.run_tool_call(call("c2", "weather", {"city": "上海"})))
    refused, = _kinds(events, "breaker_reject")
    assert (refused.tool, refused.call_id, refused.fallback) == ("weather", "c2", "weather_backup")
    assert result.name == "weather_backup" and result.ok


def test_budget_reports_withdrawals_the_denial_and_refunds_with_tokens_left(sim_clock):
    from toolkit import RetryBudget

    events: list[ToolEvent] = []
    budget = RetryBudget(capacity=10, retry_cost=5, success_refund=1)
    executor = ToolExecutor(max_retries=5, budget=budget, hooks=[events.append])
    failed = run(executor.execute(inject_faults(search, ["connection"] * 9), "search", "x"))
    spent = [(e.kind, e.attempt, e.cost, e.tokens) for e in _kinds(events, "budget_withdraw", "budget_deny")]
    assert spent == [("budget_withdraw", 1, 5, 5), ("budget_withdraw", 2, 5, 0), ("budget_deny", 3, 5, 0)]
    assert failed.attempts == 3 and budget.denied == 1
    deny = _kinds(events, "budget_deny")[0]
    assert deny.time == failed.trace[-1].end
    events.clear()
    assert run(executor.execute(search, "search", "y")).ok
    refund, = _kinds(events, "budget_refund")
    assert (refund.cost, refund.tokens, refund.attempt) == (1, 1, 1)


def test_a_refund_into_a_full_budget_is_not_an_event(sim_clock):
    from toolkit import RetryBudget

    events: list[ToolEvent] = []
    executor = ToolExecutor(budget=RetryBudget(capacity=10), hooks=[events.append])
    assert run(executor.execute(search, "search", "y")).ok
    assert not _kinds(events, "budget_refund", "budget_withdraw", "budget_deny")
