"""Circuit breaker counting (a partial result is an answer) and fallbacks that run as themselves (issue 9.8, 9.13)."""
from __future__ import annotations

import asyncio
import json

from toolkit import CircuitBreaker, PartialResult, RetryPolicy, ToolExecutor, ToolRegistry


def run(coro):
    return asyncio.run(coro)


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class Scripted:
    """A tool that answers from a script: an exception to raise, or a value to return."""

    def __init__(self, *script) -> None:
        self.script = list(script)
        self.calls = 0

    def __call__(self, **kwargs):
        self.calls += 1
        step = self.script.pop(0) if self.script else "ok"
        if isinstance(step, BaseException):
            raise step
        return step


def breaker_executor(threshold: int = 2, cooldown: float = 10) -> ToolExecutor:
    return ToolExecutor(policy=RetryPolicy(max_retries=0),
                        breaker=CircuitBreaker(failure_threshold=threshold, cooldown=cooldown))


# --- 9.13: consecutive means consecutive --------------------------------------------------------------------------

def test_a_partial_result_between_two_failures_keeps_the_circuit_closed(sim_clock):
    tool = Scripted(ConnectionError("down"), PartialResult({"上海": "晴"}, "北京超时"), ConnectionError("down"), "ok")
    executor = breaker_executor(threshold=2)
    statuses = [run(executor.execute(tool, "weather")).status for _ in range(4)]
    assert statuses == ["error", "partial", "error", "success"]
    assert tool.calls == 4  # the fourth call ran: fail, partial, fail is not two failures in a row
    assert executor.breaker.state("weather", sim_clock.now()) == "closed"


def test_two_failures_in_a_row_still_open_the_circuit(sim_clock):
    tool = Scripted(ConnectionError("down"), ConnectionError("down"))
    executor = breaker_executor(threshold=2)
    codes = [run(executor.execute(tool, "weather")).error_code for _ in range(3)]
    assert codes == ["CONNECTION", "CONNECTION", "CIRCUIT_OPEN"] and tool.calls == 2


def test_a_half_open_trial_returning_partial_closes_the_circuit(sim_clock):
    tool = Scripted(ConnectionError("down"), ConnectionError("down"), PartialResult([1], "第二页超时"), "ok")
    executor = breaker_executor(threshold=2, cooldown=10)
    for _ in range(2):
        run(executor.execute(tool, "api"))
    assert executor.breaker.state("api", sim_clock.now()) == "open"
    sim_clock.advance(10)
    trial = run(executor.execute(tool, "api"))
    assert trial.status == "partial"
    assert executor.breaker.state("api", sim_clock.now()) == "closed"
    assert run(executor.execute(tool, "api")).ok and tool.calls == 4


# --- 9.8: a fallback runs as itself -------------------------------------------------------------------------------

def _registry_with_write_fallback(backup_attempts: list) -> ToolRegistry:
    registry = ToolRegistry()

    def submit(order: str) -> str:
        raise ConnectionError("primary down")

    def submit_backup(order: str, idempotency_key: str = "") -> str:
        backup_attempts.append(order)
        raise TimeoutError("backup did not answer")

    registry.register(submit, fallback="submit_backup")
    registry.register(submit_backup, writes=True)
    return registry


def _open_circuit(executor: ToolExecutor, registry: ToolRegistry, name: str, arguments: dict) -> None:
    for i in range(2):
        assert run(executor.run_tool_call(call(f"p{i}", name, arguments), registry)).error_code == "CONNECTION"


def test_a_write_fallback_is_not_retried_after_a_timeout(sim_clock):
    attempts: list = []
    registry = _registry_with_write_fallback(attempts)
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=3),
                            breaker=CircuitBreaker(failure_threshold=2, cooldown=60))
    executor.breaker.record("submit", False, 0.0)
    executor.breaker.record("submit", False, 0.0)  # the primary's circuit is open
    result = run(executor.run_tool_call(call("c1", "submit", {"order": "A-1"})))
    assert result.name == "submit_backup" and result.error_code == "TIMEOUT"
    assert attempts == ["A-1"]  # once, as if it had been called directly
    assert "写操作" in result.error and "熔断" in result.note


def test_a_write_fallback_with_an_idempotency_key_may_be_retried(sim_clock):
    attempts: list = []
    registry = _registry_with_write_fallback(attempts)
    registry.get("submit").parameters["properties"]["idempotency_key"] = {"type": "string"}
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=2),
                            breaker=CircuitBreaker(failure_threshold=5, cooldown=60))
    for _ in range(5):
        executor.breaker.record("submit", False, 0.0)  # the primary's circuit is open
    run(executor.run_tool_call(call("c1", "submit", {"order": "A-1", "idempotency_key": "k"})))
    assert len(attempts) == 3  # the key makes retrying the write safe: its own policy says so


def test_fallback_arguments_are_checked_against_the_fallbacks_own_schema(sim_clock):
    registry = ToolRegistry()
    backup_calls: list = []

    def search(query: str, page: int = 1) -> str:
        raise ConnectionError("down")

    def search_backup(**arguments) -> str:  # takes anything: only its schema can refuse
        backup_calls.append(arguments)
        return f"备用：{arguments['query']}"

    registry.register(search, fallback="search_backup")
    registry.register(search_backup, parameters={"type": "object", "properties": {"query": {"type": "string"}},
                                                 "required": ["query"], "additionalProperties": False})
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=0),
                            breaker=CircuitBreaker(failure_threshold=2, cooldown=60))
    _open_circuit(executor, registry, "search", {"query": "a", "page": 2})
    refused = run(executor.run_tool_call(call("c3", "search", {"query": "a", "page": 2})))
    assert refused.status == "error" and refused.error_code == "INVALID_ARGUMENTS"
    assert "search_backup" in refused.error and backup_calls == []  # never called with an argument it lacks
    fine = run(executor.run_tool_call(call("c4", "search", {"query": "b"})))
    assert fine.ok and fine.data == "备用：b" and fine.call_id == "c4"


def test_a_fallback_refusing_the_arguments_after_a_down_service_says_the_service_was_down(sim_clock):
    """No breaker: the primary answered 503 after its retries, and the fallback's schema refuses the arguments.
    The model is told what happened (the service was down), not that a circuit it does not have opened."""
    from toolkit import HTTPStatusError

    registry = ToolRegistry()

    def search(query: str, page: int = 1) -> str:
        raise HTTPStatusError(503, "维护中")

    registry.register(search, fallback="search_backup")
    registry.register(lambda query: f"备用：{query}", name="search_backup",
                      parameters={"type": "object", "properties": {"query": {"type": "string"}},
                                  "required": ["query"], "additionalProperties": False})
    executor = ToolExecutor(registry=registry, policy=RetryPolicy(max_retries=1))
    refused = run(executor.run_tool_call(call("c1", "search", {"query": "a", "page": 2})))
    assert refused.status == "error" and refused.error_code == "INVALID_ARGUMENTS"
    assert "熔断" not in refused.error and "服务暂时不可用" in refused.error and "search_backup" in refused.error
