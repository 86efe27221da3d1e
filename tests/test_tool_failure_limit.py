"""run_agent's per-tool limit on consecutive failures: a model that keeps rewording its arguments after the
same 500 error (the repeated-call check sees different arguments) is stopped after max_tool_failures runs,
and told so in the tool message."""
from __future__ import annotations

import json

import pytest

from toolkit import HTTPStatusError, SimulatedClock, ToolExecutor, ToolRegistry, use_clock
from toolkit.agent import run_agent
from toolkit.llm import Settings, make_client

QUESTION = "上海今天天气怎么样？"


def _weather(plan: list[str], tried: list[str]) -> ToolRegistry:
    """A registry whose get_weather follows `plan` ("500" fails with HTTP 500, "ok" answers), recording cities."""
    steps = iter(plan)

    def get_weather(city: str) -> dict:
        """查询某个城市今天的天气。"""
        tried.append(city)
        if next(steps, "500") == "500":
            raise HTTPStatusError(500, "天气服务内部错误")
        return {"city": city, "condition": "晴", "temp_c": 26}

    registry = ToolRegistry()
    registry.register(get_weather)
    return registry


def _run(plan: list[str], **options) -> tuple:
    tried: list[str] = []
    client, model = make_client(Settings(base_url=None, model="offline-stand-in:change-arguments", offline=True))
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, client=client, model=model, max_turns=8,
                        executor=ToolExecutor(registry=_weather(plan, tried), max_retries=0), **options)
    return run, tried


def test_the_model_rewords_its_arguments_after_each_failure_so_repeats_are_not_caught():
    run, tried = _run([], max_tool_failures=None)
    assert run.stopped == "max_turns" and len(tried) == 8 and len(set(tried)) > 4
    assert run.repeated_calls == 0


def test_after_three_failures_in_a_row_the_tool_is_not_run_and_the_model_is_told_to_stop():
    run, tried = _run([])
    assert len(tried) == 3
    refused = run.tool_results[3]
    assert refused.error_code == "TOOL_FAILURE_LIMIT" and refused.attempts == 0
    content = json.loads([m for m in run.messages if m["role"] == "tool"][3]["content"])
    assert "连续失败 3 次" in content["error"] and "不要再试" in content["error"]
    assert run.stopped == "answered" and "SERVER_ERROR" in run.answer and "失败" in run.answer


def test_the_limit_is_a_parameter_and_a_success_resets_the_count():
    assert len(_run([], max_tool_failures=1)[1]) == 1
    run, tried = _run(["500", "500", "ok"])
    assert len(tried) == 3 and run.stopped == "answered" and "26" in run.answer


def test_other_tools_and_refused_calls_do_not_count():
    from toolkit.tools import default_registry
    loop_client, loop_model = make_client(Settings(base_url=None, model="offline-stand-in:loop", offline=True))
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("哪个类别销售额最高？总销售额是多少？", client=loop_client, model=loop_model, max_turns=6,
                        registry=default_registry())
    assert [r.error_code for r in run.tool_results[1:]] == ["REPEATED_CALL"] * 5


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
def test_a_bad_limit_is_a_value_error(bad):
    with pytest.raises(ValueError, match="max_tool_failures"):
        run_agent(QUESTION, max_tool_failures=bad)


def test_the_command_line_notes_the_limit_in_one_line():
    from toolkit.agent.cli import mistake_notes
    run, _ = _run([])
    [note] = mistake_notes(run)
    assert note.startswith("注意：工具 get_weather 连续失败后") and "不再执行" in note
