"""The answers appendix 03b gives to its 想一想 questions are true of the toolkit's executor: the fallback tool
and the circuit breaker. Each test reads the answer's claims (counts, names, the notes) from the notebook's
<details>; the last test shows a wrong answer fails."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said

from toolkit import CircuitBreaker, SimulatedClock, ToolExecutor, ToolRegistry, inject_faults, use_clock
from toolkit.tools import get_weather as local_weather

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "03b_fallback_breaker.ipynb"
CALL = {"id": "c1", "function": {"name": "weather_primary", "arguments": '{"city": "上海"}'}}


def _registry(primary, backup, writes: bool = False) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(primary, name="weather_primary", description="主", parameters=CITY, fallback="weather_backup")
    registry.register(backup, name="weather_backup", description="备用", parameters=CITY, writes=writes)
    return registry


def fallback_run(backup, writes: bool, fault: str = "unavailable", max_retries: int = 1, calls: int = 1,
                 breaker: CircuitBreaker | None = None) -> tuple:
    """(requests the always-failing primary got, the last ToolResult) after `calls` calls of weather_primary."""
    async def go():
        with use_clock(SimulatedClock(seed=0)):
            primary = inject_faults(local_weather, rates={fault: 1.0})
            executor = ToolExecutor(max_retries=max_retries, registry=_registry(primary, backup, writes),
                                    breaker=breaker)
            results = [await executor.run_tool_call(CALL) for _ in range(calls)]
            return len(primary.calls), results[-1]
    return asyncio.run(go())


def test_q1_retries_ending_on_an_unavailable_service_go_to_the_fallback():
    text, asked = answer(CHAPTER, 1), question(CHAPTER, 1)
    calls, result = fallback_run(local_weather, writes=False, max_retries=number(asked, r"`max_retries=(\d+)`"))
    assert calls == number(text, r"主接口被请求 (\d+) 次")
    assert result.name == said(text, r"改用备用接口 `(\w+)`") and result.status == "success"
    assert result.note == said(text, r"`note` 里写着“([^”]+)”")
    assert "上海" in json.dumps(result.data, ensure_ascii=False)


def test_a_writing_fallback_is_not_retried_after_a_timeout():
    """Section 2: a fallback that writes (writes=True) follows the write rules: no retry after a timeout."""
    backup_calls = []

    def backup(city: str) -> str:
        backup_calls.append(city)
        raise TimeoutError("备用接口没有回答")

    _, result = fallback_run(backup, writes=True)
    assert result.name == "weather_backup" and result.error_code == "TIMEOUT"
    assert backup_calls == ["上海"]  # the write rules: no idempotency_key, no retry after a timeout


def test_q2_a_breaker_leaves_the_dead_service_alone_after_three_failed_calls():
    text, asked = answer(CHAPTER, 2), question(CHAPTER, 2)
    calls, max_retries = number(asked, r"连着调用 (\d+) 次"), number(asked, r"`max_retries=(\d+)`")
    threshold = number(asked, r"failure_threshold=(\d+)")
    without, _ = fallback_run(local_weather, False, max_retries=max_retries, calls=calls)
    breaker = CircuitBreaker(failure_threshold=threshold, cooldown=60)
    with_breaker, last = fallback_run(local_weather, False, max_retries=max_retries, calls=calls, breaker=breaker)
    assert without == number(text, r"^不加熔断器是 (\d+) 次") == calls * (max_retries + 1)
    assert with_breaker == number(text, r"加上熔断器是 (\d+) 次") == threshold * (max_retries + 1)
    assert number(text, r"前 (\d+) 次调用各请求") == threshold
    assert number(text, r"后面 (\d+) 次直接走备用工具") == calls - threshold
    assert last.name == said(text, r"回答都来自 `(\w+)`")
    assert said(text, r"熔断后的 `note` 说的是“([^”]+)”") in last.note


def test_q3_after_the_cooldown_one_probe_decides_open_again_or_closed():
    text, asked = answer(CHAPTER, 3), question(CHAPTER, 3)
    cooldown = number(asked, r"走过 (\d+) 秒")

    async def probe(recovered: bool):
        breaker = CircuitBreaker(failure_threshold=3, cooldown=cooldown)
        with use_clock(SimulatedClock(seed=0)) as clock:
            primary = inject_faults(local_weather, rates={"unavailable": 1.0})
            executor = ToolExecutor(max_retries=1, registry=_registry(primary, local_weather), breaker=breaker)
            for _ in range(3):
                await executor.run_tool_call(CALL)
            before = len(primary.calls)
            await clock.sleep(cooldown)
            if recovered:
                primary.set_rates({})
            result = await executor.run_tool_call(CALL)
            return len(primary.calls) - before, result.name, breaker.state("weather_primary", clock.now())

    down, up = asyncio.run(probe(False)), asyncio.run(probe(True))
    assert down == (number(text, r"还挂着：试探调用请求了主接口 (\d+) 次"), said(text, r"还挂着：[^。]*回答来自 `(\w+)`"),
                    said(text, r"熔断器重新 `(\w+)`"))
    assert up == (number(text, r"已经恢复：主接口被请求 (\d+) 次"), said(text, r"已经恢复：[^。]*回答来自 `(\w+)`"),
                  said(text, r"熔断器 `(\w+)`，之后"))


WRONG_ANSWERS = [
    (1, "主接口被请求 2 次", "主接口被请求 4 次"),
    (1, "改用备用接口 `weather_backup`", "改用备用接口 `weather_primary`"),
    (2, "加上熔断器是 6 次", "加上熔断器是 3 次"),
    (2, "后面 7 次直接走备用工具", "后面 8 次直接走备用工具"),
    (2, "不加熔断器是 20 次", "不加熔断器是 10 次"),
    (3, "试探调用请求了主接口 2 次", "试探调用请求了主接口 1 次"),
    (3, "熔断器 `closed`", "熔断器 `half_open`"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
