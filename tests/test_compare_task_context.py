"""compare_task_context: against a real endpoint it runs the question both ways and counts; offline it skips."""
from __future__ import annotations

import pytest

from toolkit.agent import compare_task_context
from toolkit.llm import OFFLINE_MODEL, Settings, start_offline_server

QUESTION = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"


def test_offline_settings_skip_in_one_line_without_running_the_model():
    result = compare_task_context(QUESTION, settings=Settings(None, OFFLINE_MODEL, None, True))
    assert result.skipped and (result.without, result.with_context) == (0, 0)
    text = str(result)
    assert text.startswith("已跳过：") and "\n" not in text and "离线" in text


def test_without_a_dotenv_the_default_settings_are_offline_and_it_skips(monkeypatch):
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")  # conftest removed every key from the environment
    assert compare_task_context(QUESTION, runs=1).skipped


def test_a_real_endpoint_runs_the_question_both_ways_and_counts_the_runs_that_did_every_step():
    # The offline model behind real HTTP, configured as a real endpoint: it does both steps only with the block.
    server = start_offline_server()
    try:
        settings = Settings(server.base_url, OFFLINE_MODEL, "test-key-not-secret", offline=False)
        result = compare_task_context(QUESTION, runs=2, settings=settings)
    finally:
        server.stop()
    assert result.skipped is None
    assert (result.runs, result.without, result.with_context) == (2, 0, 2)
    assert str(result) == f"模型 {OFFLINE_MODEL}，每种 2 次：不加 [TASK_CONTEXT] 完成全部步骤 0 次，加上后 2 次"


def test_a_custom_verdict_decides_what_counts_as_done():
    server = start_offline_server()
    try:
        settings = Settings(server.base_url, OFFLINE_MODEL, "test-key-not-secret", offline=False)
        result = compare_task_context(QUESTION, runs=1, settings=settings, done=lambda run: "LAB1" in run.answer)
    finally:
        server.stop()
    assert (result.without, result.with_context) == (0, 1)


@pytest.mark.parametrize("runs", [0, -1, True, 1.5])
def test_runs_must_be_a_positive_int(runs):
    with pytest.raises(ValueError, match="runs"):
        compare_task_context(QUESTION, runs=runs)
