"""The [TASK_CONTEXT] block as a protocol: parse beside render, named labels, one step splitter (issue 8.6)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit import ToolResult
from toolkit import task_context as tc
from toolkit.agent import run_agent, split_steps
from toolkit.messages import format_tool_message
from toolkit.readback import read_tool_content
from toolkit.task_context import TaskContext
from toolkit.verify import check_answer

TWO_STEPS = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(str.strip)


@st.composite
def contexts(draw) -> TaskContext:
    steps = draw(st.lists(_text, max_size=5))
    return TaskContext(draw(_text), steps, draw(st.integers(0, len(steps))))


@settings(max_examples=300, deadline=None)
@given(contexts())
def test_parse_reads_back_what_render_wrote(ctx):
    assert TaskContext.parse(ctx.render()) == ctx.normalized()


@settings(max_examples=100, deadline=None)
@given(contexts(), st.text(max_size=200))
def test_a_tool_message_carries_its_context_and_its_status(ctx, text):
    message = format_tool_message("t", "c1", ToolResult("t", {"text": text}), task_context=ctx)
    reading = read_tool_content(message["content"])
    assert reading.status == "success" and reading.data == {"text": text}
    assert reading.context == ctx.normalized()


def test_text_without_a_block_parses_to_none():
    for text in ("", "no block", "[TASK_CONTEXT]\n当前任务：x\n[/TASK_CONTEXT]", "[TASK_CONTEXT]\n已完成步骤：3/2\n"):
        assert TaskContext.parse(text) is None


REWORDED = {"task": "整体任务", "progress": "进度", "finished": "做完的", "next": "接下来要做"}


@pytest.fixture
def reworded(monkeypatch):
    for key, label in REWORDED.items():
        monkeypatch.setitem(tc.LABELS, key, label)
    monkeypatch.setattr(tc, "ALL_DONE", "全部做完了")
    monkeypatch.setattr(tc, "RESULT_MARKER", "工具结果如下：")


def test_rewording_the_block_keeps_the_round_trip(reworded):
    ctx = TaskContext("出行准备", ["查天气", "查航班", "订酒店"], 1)
    text = ctx.render()
    assert "接下来要做：查航班" in text and "下一步" not in text
    assert TaskContext.parse(text) == ctx


def test_rewording_the_block_does_not_break_the_offline_model(reworded, monkeypatch):
    for name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")
    run = run_agent(TWO_STEPS)
    assert [r.name for r in run.tool_results] == ["get_weather", "search_flights"], run.answer
    block = run.messages[3]["content"]
    assert block.startswith(tc.OPEN) and "进度：1/2" in block and "工具结果如下：" in block
    assert run.task_context.done == 2


def test_one_step_splitter_serves_the_agent_and_the_offline_model():
    assert split_steps(TWO_STEPS) == ["帮我查一下上海的天气", "查一下今天北京飞上海的航班"]
    assert split_steps("查上海天气，北京飞上海的航班", fine=True) == ["查上海天气", "北京飞上海的航班"]
    assert split_steps("查上海天气，北京飞上海的航班") == ["查上海天气，北京飞上海的航班"]


def test_the_answer_check_decides_on_the_structured_status_not_on_a_symbol():
    failed = format_tool_message("t", "c1", ToolResult("t", None, "磁盘坏了", error_type="fatal",
                                                        error_code="DISK"))["content"]
    assert check_answer("显示器最高，9692。", failed).tool_failed
    # a plain text that merely starts with the old failure symbol is data, not a verdict
    assert not check_answer("数字是 12。", "❌ 12").tool_failed
    assert check_answer("数字是 12。", "❌ 12").ok
