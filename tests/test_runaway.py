"""Runaway protection: one question can never turn into hundreds of calls or an endless wait.

Four brakes, each shown with numbers: an overall deadline per call, a circuit
breaker per tool (fail fast, or the registered fallback tool: the original course's
"服务不可用 -> 降级处理或跳过，换用备用工具"), a run-wide RetryBudget shared by
all tools, and no automatic retry of a write after a timeout unless the call
carries an idempotency_key. `pytest -s -n 0` prints the numbers.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from toolkit import (Backoff, CircuitBreaker, HTTPStatusError, RetryBudget, RetryPolicy, SimulatedClock, Tool, ToolExecutor,
                     ToolRegistry, call_tool_with_retry, evaluate_tool_result, inject_faults, use_clock)
from toolkit.messages import tool_content

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}


def weather(city: str = "上海") -> dict:
    return {"city": city, "weather": "晴", "source": "primary"}


def backup_weather(city: str = "上海") -> dict:
    return {"city": city, "weather": "晴", "source": "backup"}


def _always(fault: str, tool=weather):
    return inject_faults(tool, rates={fault: 1.0}, latency=0.0)


def _call(i: int, name: str = "weather") -> dict:
    return {"id": f"call_{i}", "function": {"name": name, "arguments": json.dumps({"city": f"城市{i}"})}}


def _run(coro):
    with use_clock(SimulatedClock(seed=0)) as clock:
        return asyncio.run(coro), clock


# --- deadline ---------------------------------------------------------------------------------

def test_deadline_bounds_a_call_that_keeps_failing() -> None:
    flaky = _always("unavailable")
    policy = RetryPolicy(max_retries=100, deadline=10.0, backoff=Backoff(base=1.0, cap=4.0, jitter="none"))
    outcome, clock = _run(call_tool_with_retry(flaky, policy=policy))
    print(f"\nalways-503 with max_retries=100, deadline=10 s: {len(flaky.calls)} attempts, "
          f"{clock.now():g} s simulated, gave_up={outcome.gave_up}")
    assert outcome.gave_up == "deadline"
    assert clock.now() <= 10.0
    assert len(flaky.calls) < 10
    assert "总时限 10 秒" in outcome.error


def test_deadline_cuts_a_hanging_attempt_without_attempt_timeout() -> None:
    hanging = inject_faults(weather, ["hang"] * 5)
    outcome, clock = _run(call_tool_with_retry(hanging, policy=RetryPolicy(max_retries=3, deadline=7.0)))
    assert clock.now() == pytest.approx(7.0)     # the deadline is the attempt's timeout
    assert outcome.info.error_code == "TIMEOUT"
    assert len(hanging.calls) == 1              # no time is left for another attempt


# --- circuit breaker ----------------------------------------------------------------------------

def test_circuit_breaker_fails_fast_after_k_failures_then_recovers_after_cooldown() -> None:
    flaky = _always("unavailable")
    registry = ToolRegistry([Tool("weather", flaky, "查天气", CITY)])
    breaker = CircuitBreaker(failure_threshold=3, cooldown=30.0)
    executor = ToolExecutor(registry=registry, breaker=breaker, policy=RetryPolicy(max_retries=1))

    async def main(clock: SimulatedClock):
        results = [await executor.run_tool_call(_call(i)) for i in range(10)]
        attempts_while_open = len(flaky.calls)
        await clock.sleep(31.0)                   # cool-down over: one trial call
        flaky.set_rates({})                       # the service is back
        trial = await executor.run_tool_call(_call(99))
        return results, attempts_while_open, trial

    with use_clock(SimulatedClock(seed=0)) as clock:
        results, attempts, trial = asyncio.run(main(clock))
    codes = [r.error_code for r in results]
    print(f"\n10 calls to an always-503 tool, breaker K=3: tool attempts {attempts} "
          f"(without the breaker {10 * 2}); codes {codes}")
    assert codes[:3] == ["UNAVAILABLE"] * 3
    assert codes[3:] == ["CIRCUIT_OPEN"] * 7
    assert attempts == 3 * 2                    # only the first K calls reached the tool
    assert all(r.attempts == 0 for r in results[3:])
    assert evaluate_tool_result(results[-1], "上海天气")["action"] == "retry"
    assert "熔断" in results[-1].error
    assert trial.ok and breaker.state("weather", clock.now()) == "closed"


def test_open_circuit_goes_to_the_registered_fallback_tool() -> None:
    """The original course: 服务不可用 -> 降级处理或跳过，换用备用工具."""
    primary = _always("unavailable")
    registry = ToolRegistry([Tool("weather", primary, "查天气", CITY, fallback="backup_weather"),
                             Tool("backup_weather", backup_weather, "备用天气源", CITY)])
    executor = ToolExecutor(registry=registry, breaker=CircuitBreaker(failure_threshold=2, cooldown=60.0),
                            policy=RetryPolicy(max_retries=1))

    async def main():
        return [await executor.run_tool_call(_call(i)) for i in range(5)]

    results, _ = _run(main())
    assert [r.status for r in results] == ["success"] * 5
    assert [r.name for r in results] == ["backup_weather"] * 5
    assert all(r.data["source"] == "backup" for r in results)
    assert [r.call_id for r in results] == [f"call_{i}" for i in range(5)]  # answers the model's own ids
    assert len(primary.calls) == 4              # 2 calls x 2 attempts, then never again while open
    # the first two: the primary's retries ended on a down service; then its circuit is open
    assert all("不可用" in r.note for r in results[:2]) and all("熔断" in r.note for r in results[2:])
    primary_results = [r for r in executor.call_history if r.name == "weather"]
    assert [r.error_code for r in primary_results] == ["UNAVAILABLE"] * 2  # the audit log keeps the primary's failures


def test_a_down_service_goes_to_the_fallback_after_its_retries_and_the_model_is_told() -> None:
    """服务不可用 (HTTP 503, 502) ends in the fallback at once, without waiting for the breaker."""
    def bad_gateway(city: str = "上海") -> dict:
        raise HTTPStatusError(502, "上游服务暂时不可用")

    for fault, code in (("unavailable", "UNAVAILABLE"), ("bad_gateway", "BAD_GATEWAY")):
        primary = _always(fault) if fault == "unavailable" else inject_faults(bad_gateway, latency=0.0)
        registry = ToolRegistry([Tool("weather", primary, "查天气", CITY, fallback="backup_weather"),
                                 Tool("backup_weather", backup_weather, "备用天气源", CITY)])
        executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=2))
        (result,), _ = _run(executor.run_tool_calls([_call(0)]))
        assert result.ok and result.name == "backup_weather" and result.call_id == "call_0"
        assert len(primary.calls) == 3, fault          # the primary's own retries came first
        content = json.loads(tool_content(result))
        assert "weather" in content["note"] and "backup_weather" in content["note"] and "不可用" in content["note"]
        assert [r.error_code for r in executor.call_history] == [code, None]


@pytest.mark.parametrize("fault", ["server_error", "timeout", "connection", "rate_limit"])
def test_other_failures_do_not_go_to_the_fallback(fault) -> None:
    registry = ToolRegistry([Tool("weather", _always(fault), "查天气", CITY, fallback="backup_weather"),
                             Tool("backup_weather", backup_weather, "备用天气源", CITY)])
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=1))
    (result,), _ = _run(executor.run_tool_calls([_call(0)]))
    assert result.status == "error" and result.name == "weather"


def test_a_write_tools_fallback_still_obeys_the_write_rules() -> None:
    """The fallback of a write tool runs as a write tool: a timeout without an idempotency key is not retried."""
    def submit(order: str) -> dict:
        return {"id": order}

    backup = _always("timeout", tool=submit)
    order = {"type": "object", "properties": {"order": {"type": "string"}}}
    registry = ToolRegistry([Tool("submit", _always("unavailable", tool=submit), "下单", order, writes=True,
                                  fallback="submit_backup"),
                             Tool("submit_backup", backup, "备用下单", order, writes=True)])
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=3))
    call = {"id": "c1", "function": {"name": "submit", "arguments": json.dumps({"order": "A1"})}}
    (result,), _ = _run(executor.run_tool_calls([call]))
    assert result.name == "submit_backup" and result.error_code == "TIMEOUT"
    assert len(backup.calls) == 1 and "未自动重试" in result.error       # not retried: the write may have happened
    assert "不可用" in result.note


def test_fatal_errors_do_not_open_the_circuit() -> None:
    """A 401 is the caller's problem, not a sick service: failing fast would hide the real message."""
    denied = _always("auth")
    registry = ToolRegistry([Tool("weather", denied, "查天气", CITY)])
    executor = ToolExecutor(registry=registry, breaker=CircuitBreaker(failure_threshold=2))

    async def main():
        return [await executor.run_tool_call(_call(i)) for i in range(5)]

    results, _ = _run(main())
    assert [r.error_code for r in results] == ["UNAUTHORIZED"] * 5


# --- run-wide retry budget -------------------------------------------------------------------

def _hundred_calls(budget: RetryBudget | None) -> tuple[int, list]:
    flaky = _always("unavailable")
    registry = ToolRegistry([Tool("weather", flaky, "查天气", CITY)])
    executor = ToolExecutor(registry=registry, budget=budget, concurrency=10,
                            policy=RetryPolicy(max_retries=3, backoff=Backoff(base=0.5, cap=4.0)))
    results, _ = _run(executor.run_tool_calls([_call(i) for i in range(100)]))
    return len(flaky.calls), results


def test_retry_budget_bounds_the_attempts_of_a_failing_dependency() -> None:
    unbounded, _ = _hundred_calls(None)
    budget = RetryBudget(capacity=100, retry_cost=5)
    bounded, results = _hundred_calls(budget)
    cap = 100 + budget.capacity // budget.retry_cost
    print(f"\n100 tool calls against an always-503 tool, max_retries=3: {unbounded} attempts without a "
          f"budget; {bounded} with RetryBudget(capacity=100, retry_cost=5) (cap {cap}); "
          f"retries denied: {budget.denied}, tokens left: {budget.tokens}")
    assert unbounded == 400
    assert bounded <= cap and bounded == 120
    assert budget.tokens < budget.retry_cost
    assert all(r.status == "error" and r.error_code == "UNAVAILABLE" for r in results)
    assert sum(r.attempts for r in results) == bounded  # the records agree with the tool's own count
    assert all("重试额度已用完" in r.error for r in results)  # every call says why it stopped
    assert budget.denied == 100


def test_retry_budget_is_shared_by_all_tools_and_refilled_by_successes() -> None:
    budget = RetryBudget(capacity=20, retry_cost=5, success_refund=1)
    registry = ToolRegistry([Tool("weather", _always("server_error"), "查天气", CITY),
                             Tool("backup_weather", _always("connection", backup_weather), "备用", CITY),
                             Tool("healthy", weather, "正常", CITY)])
    executor = ToolExecutor(registry=registry, budget=budget, policy=RetryPolicy(max_retries=3))

    async def main():
        first = await executor.run_tool_call(_call(1, "weather"))        # spends 15 of 20
        second = await executor.run_tool_call(_call(2, "backup_weather"))  # 5 left: one retry
        for i in range(5):
            await executor.run_tool_call(_call(10 + i, "healthy"))       # +5 tokens
        third = await executor.run_tool_call(_call(3, "weather"))         # one retry again
        return first, second, third

    (first, second, third), _ = _run(main())
    assert (first.attempts, second.attempts, third.attempts) == (4, 2, 2)
    assert budget.tokens == 0


def test_agent_loop_with_a_failing_dependency_stays_bounded() -> None:
    """A model that keeps asking (10 parallel calls a turn, new arguments each time) cannot run away."""
    pytest.importorskip("toolkit.agent")
    from support import scripted_client
    from toolkit.agent import run_agent

    flaky = _always("unavailable")
    registry = ToolRegistry([Tool("weather", flaky, "查天气", CITY)])
    budget = RetryBudget(capacity=100, retry_cost=5)
    executor = ToolExecutor(registry=registry, budget=budget, policy=RetryPolicy(max_retries=3))
    replies = [{"tool_calls": [("weather", json.dumps({"city": f"城市{t}-{i}"})) for i in range(10)]}
               for t in range(20)]
    client, requests = scripted_client(replies)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("把所有城市的天气都查一遍", client=client, model="scripted", registry=registry,
                        executor=executor, max_turns=10)
    calls, attempts = len(run.tool_results), len(flaky.calls)
    print(f"\nagent, model asks for 10 new calls every turn: {len(requests)} model calls, {calls} tool calls, "
          f"{attempts} tool attempts (without a budget: {calls * 4})")
    assert run.stopped == "max_turns" and len(requests) == 10
    assert calls == 100
    assert attempts <= calls + budget.capacity // budget.retry_cost


def test_agent_refuses_the_same_failed_call_instead_of_running_it_again() -> None:
    pytest.importorskip("toolkit.agent")
    from support import scripted_client
    from toolkit.agent import run_agent

    denied = _always("permission")
    registry = ToolRegistry([Tool("weather", denied, "查天气", CITY)])
    client, _ = scripted_client([{"tool_calls": [("weather", '{"city": "上海"}')]}])  # forever the same
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("上海天气", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry), max_turns=6)
    assert run.stopped == "max_turns"
    assert len(denied.calls) == 1                # the fatal call ran once; repeats were refused
    assert run.repeated_calls == 5


# --- writes and idempotency --------------------------------------------------------------------

def _write_executor(fault: str) -> tuple[ToolExecutor, object]:
    def create_order(item: str, idempotency_key: str | None = None) -> dict:
        return {"status": "ok", "order_id": "A-1"}

    flaky = inject_faults(create_order, rates={fault: 1.0}, latency=0.0)
    schema = {"type": "object", "properties": {"item": {"type": "string"}, "idempotency_key": {"type": "string"}},
              "required": ["item"], "additionalProperties": False}
    registry = ToolRegistry([Tool("create_order", flaky, "下单", schema, kind="write", writes=True)])
    return ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=3)), flaky


def _order(arguments: dict) -> dict:
    return {"id": "call_w", "function": {"name": "create_order", "arguments": json.dumps(arguments)}}


@pytest.mark.parametrize("fault", ["timeout", "connection", "server_error"])
def test_write_is_not_retried_after_an_ambiguous_failure(fault: str) -> None:
    executor, flaky = _write_executor(fault)
    result, _ = _run(executor.run_tool_call(_order({"item": "显示器"})))
    assert result.attempts == 1 and len(flaky.calls) == 1
    assert result.error_type == "retryable"
    assert "写操作" in result.error and "未自动重试" in result.error
    assert "未自动重试" in json.loads(tool_content(result))["error"]


@pytest.mark.parametrize("fault", ["timeout", "connection", "server_error"])
def test_write_with_idempotency_key_is_retried(fault: str) -> None:
    executor, flaky = _write_executor(fault)
    result, _ = _run(executor.run_tool_call(_order({"item": "显示器", "idempotency_key": "order-2024-0001"})))
    assert result.attempts == 4 and len(flaky.calls) == 4


@pytest.mark.parametrize("fault", ["rate_limit", "unavailable"])
def test_write_refused_before_it_ran_is_retried(fault: str) -> None:
    """429 and 503 mean the server did not do the work: retrying cannot write twice."""
    executor, flaky = _write_executor(fault)
    result, _ = _run(executor.run_tool_call(_order({"item": "显示器"})))
    assert result.attempts == 4


def test_after_the_cooldown_only_one_trial_call_reaches_the_tool() -> None:
    flaky = _always("unavailable")
    registry = ToolRegistry([Tool("weather", flaky, "查天气", CITY)])
    breaker = CircuitBreaker(failure_threshold=2, cooldown=10.0)
    executor = ToolExecutor(registry=registry, breaker=breaker, concurrency=5, policy=RetryPolicy(max_retries=0))

    async def main(clock: SimulatedClock):
        await executor.run_tool_calls([_call(i) for i in range(2)])      # opens the circuit
        await clock.sleep(11.0)
        return await executor.run_tool_calls([_call(10 + i) for i in range(5)])  # five at once

    with use_clock(SimulatedClock(seed=0)) as clock:
        results = asyncio.run(main(clock))
    assert len(flaky.calls) == 2 + 1
    assert sorted(r.error_code for r in results) == ["CIRCUIT_OPEN"] * 4 + ["UNAVAILABLE"]
