"""The answers chapter 04 gives to its 想一想 questions are true of the chapter's code and of the toolkit."""
from __future__ import annotations

import json
import re
from pathlib import Path

from toolkit import SimulatedClock, ToolResult, format_tool_message, use_clock
from toolkit.agent import run_agent

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "04_tool_messages.ipynb"
HALF = ToolResult("get_weather", {"上海": "多云 28°C"}, "部分结果缺失：北京的天气接口超时", error_type="partial",
                  missing="北京")
FATAL = ToolResult("search", None, "没有访问 /data/finance 的权限", error_type="fatal", error_code="PERMISSION_DENIED")
QUESTION = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"


def chapter_version(marker: str):
    """The format_tool_message the chapter defines in the code cell whose source matches `marker`."""
    cells = ["".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    [source] = [s for s in cells if re.search(marker, s) and "def format_tool_message(" in s]
    namespace = {"__name__": "chapter_04", "json": json}
    exec(compile(source, str(CHAPTER), "exec"), namespace)
    return namespace["format_tool_message"]


def original():
    return chapter_version(r"第一版：原课程的代码")


def classroom():
    return chapter_version(r"课堂版：")


def test_q1_the_original_writes_a_partial_result_as_an_error():
    assert HALF.status == "partial" and HALF.error is not None
    assert json.loads(original()("get_weather", "call_3", HALF)["content"])["status"] == "error"
    assert json.loads(classroom()("get_weather", "call_3", HALF)["content"])["status"] == "partial"


def test_q2_three_formats_carry_the_same_text_and_only_an_error_is_marked_is_error():
    body = {"openai_chat": "content", "openai_responses": "output", "anthropic": "content"}
    for fn in (classroom(), format_tool_message):
        texts = {fn("get_weather", "call_6", HALF, fmt=fmt)[key] for fmt, key in body.items()}
        assert len(texts) == 1
        assert fn("get_weather", "call_6", HALF, fmt="anthropic")["is_error"] is False
        assert fn("search", "call_6", FATAL, fmt="anthropic")["is_error"] is True


def test_q3_run_agent_passes_only_role_call_id_and_content_of_a_plugins_message():
    fn = original()
    assert "name" in fn("analyze_sales_csv", "call_1", ToolResult("analyze_sales_csv", {"a": 1}))
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("哪个类别销售额最高？", format_message=fn)
    [message] = [m for m in run.messages if m.get("role") == "tool"]
    assert list(message) == ["role", "tool_call_id", "content"]
    [asked] = [call["id"] for m in run.messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []]
    assert message["tool_call_id"] == asked


def test_q4_without_task_context_the_offline_model_calls_only_the_weather_tool():
    with use_clock(SimulatedClock(seed=0)):
        forgetful = run_agent(QUESTION, task_context=False)
        mindful = run_agent(QUESTION)
    assert [r.name for r in forgetful.tool_results] == ["get_weather"]
    assert [r.name for r in mindful.tool_results] == ["get_weather", "search_flights"]
