"""The answers chapter 03 gives to its 想一想 questions are true of the code: the chapter's own functions (read
from the notebook) and the toolkit."""
from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

from toolkit import (Backoff, RetryBudget, SimulatedClock, ToolExecutor, ToolRegistry, call_tool_with_retry,
                     inject_faults, use_clock, wording)
from toolkit.simulation import BUDGET_CAPACITY, herd_peaks
from toolkit.tools import get_weather as local_weather

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "03_retry.ipynb"


def chapter_versions(name: str) -> list:
    """Every definition of `name` in the chapter's code cells, in order, each with the chapter's imports."""
    cells = ["".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    namespace: dict = {}
    exec(cells[0], namespace)  # the setup cell: imports and get_weather
    versions = []
    for source in cells:
        tree = compile(source, "cell", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                exec(compile(ast.Module([node], []), "cell", "exec"), namespace)
                versions.append(namespace[name])
    return versions


async def _weather(city: str) -> str:
    return f"{city}：多云"


def _calls(retry, plan, **kwargs) -> tuple[int, object]:
    async def go():
        with use_clock(SimulatedClock(seed=0)):
            tool = inject_faults(_weather, plan)
            value = await retry(tool, "上海", **kwargs)
            return len(tool.calls), value
    return asyncio.run(go())


def test_q1_max_retries_3_means_4_calls_and_the_original_made_3():
    final = chapter_versions("call_tool_with_retry")[-1]
    [naive] = chapter_versions("naive_call_tool_with_retry")
    assert _calls(final, ["timeout"] * 10, max_retries=3)[0] == 4
    assert _calls(call_tool_with_retry, ["timeout"] * 10, max_retries=3)[0] == 4
    count, (_, error) = _calls(naive, ["timeout"] * 10, max_retries=3)
    assert count == 3 and "已重试 3 次" in error  # total, not retries; and the message says 3 retries
    assert _calls(naive, ["timeout"], max_retries=0) == (0, None)  # no pair at all


def test_q2_without_jitter_all_100_clients_retry_in_the_same_100_ms():
    assert Backoff(jitter="none").schedule(4) == [1, 2, 4, 8]  # retries at 1, 3, 7, 15 s
    peaks = herd_peaks(clients=100, retries=4)
    assert peaks["none"] == 100
    assert 10 <= peaks["full"] < 20  # "十几个"


def _fallback_run(backup, writes: bool) -> tuple:
    async def go():
        with use_clock(SimulatedClock(seed=0)):
            primary = inject_faults(local_weather, rates={"unavailable": 1.0})
            registry = ToolRegistry()
            registry.register(primary, name="weather_primary", description="主", parameters=CITY,
                              fallback="weather_backup")
            registry.register(backup, name="weather_backup", description="备用", parameters=CITY, writes=writes)
            result = await ToolExecutor(max_retries=1, registry=registry).run_tool_call(
                {"id": "c1", "function": {"name": "weather_primary", "arguments": '{"city": "上海"}'}})
            return len(primary.calls), result
    return asyncio.run(go())


def test_q3_retries_ending_on_an_unavailable_service_go_to_the_fallback():
    calls, result = _fallback_run(local_weather, writes=False)
    assert calls == 2 and result.name == "weather_backup" and result.status == "success"
    assert result.note == wording.fallback_unavailable_note("weather_primary", "weather_backup")
    assert "上海" in json.dumps(result.data, ensure_ascii=False)


def test_q3_a_writing_fallback_is_not_retried_after_a_timeout():
    backup_calls = []

    def backup(city: str) -> str:
        backup_calls.append(city)
        raise TimeoutError("备用接口没有回答")

    _, result = _fallback_run(backup, writes=True)
    assert result.name == "weather_backup" and result.error_code == "TIMEOUT"
    assert backup_calls == ["上海"]  # the write rules: no idempotency_key, no retry after a timeout


def test_q4_the_default_budget_gives_200_requests_and_chapter_09s_smaller_one_120():
    assert (RetryBudget().capacity, RetryBudget().retry_cost, BUDGET_CAPACITY) == (500, 5, 100)

    async def requests(budget):
        with use_clock(SimulatedClock(seed=0)):
            tool = inject_faults(_weather, rates={"unavailable": 1.0})
            executor = ToolExecutor(max_retries=3, budget=budget)
            for _ in range(100):
                await executor.execute(tool, "weather", "上海")
            return len(tool.calls)

    counts = [asyncio.run(requests(b)) for b in (None, RetryBudget(), RetryBudget(capacity=BUDGET_CAPACITY))]
    assert counts == [400, 200, 120]
