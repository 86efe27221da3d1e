"""Tests for toolkit.messages: the three wire formats, the content JSON, and the [TASK_CONTEXT] block."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math

import pytest

from toolkit import PartialResult, TaskContext, ToolResult, format_tool_message, split_task_context
from toolkit.messages import MESSAGE_MAX_CHARS
from toolkit.task_context import with_task_context


def content_of(message: dict) -> dict:
    text = message.get("content", message.get("output"))
    assert isinstance(text, str)
    return json.loads(text)


# --- the seed's openai chat format ---------------------------------------------------------------------

def test_success_message_has_the_seed_fields():
    result = ToolResult("web_search", {"城市": "上海", "天气": "晴"}, duration_ms=512.34)
    message = format_tool_message("web_search", "call_1", result)
    assert message["role"] == "tool"
    assert message["tool_call_id"] == "call_1"
    assert content_of(message) == {"status": "success", "result": {"城市": "上海", "天气": "晴"}, "error": None,
                                   "error_type": None, "execution_time_ms": 512.3}


def test_chinese_stays_readable_in_content():
    message = format_tool_message("t", "c", ToolResult("t", "显示器 4495 元"))
    assert "显示器 4495 元" in message["content"]
    assert "\\u" not in message["content"]


def test_error_message_carries_status_error_and_kind():
    result = ToolResult("t", None, "请求超时", error_type="retryable", error_code="TIMEOUT", attempts=4)
    body = content_of(format_tool_message("t", "c", result))
    assert body["status"] == "error"
    assert body["result"] is None
    assert body["error"] == "请求超时"
    assert body["error_type"] == "retryable"
    assert body["error_code"] == "TIMEOUT"
    assert body["attempts"] == 4


def test_partial_message_says_what_is_missing():
    result = ToolResult("w", {"上海": "晴"}, "部分缺失", error_type="partial", missing="北京")
    body = content_of(format_tool_message("w", "c", result))
    assert body["status"] == "partial"
    assert body["missing"] == "北京"
    assert body["result"] == {"上海": "晴"}


def test_a_bare_partial_result_is_partial_not_success():
    message = format_tool_message("w", "c", PartialResult({"上海": "晴"}, "北京的天气接口超时"), fmt="anthropic")
    body = content_of(message)
    assert body["status"] == "partial"
    assert body["result"] == {"上海": "晴"}
    assert body["missing"] == "北京的天气接口超时"
    assert message["is_error"] is False


def test_a_bare_error_envelope_is_an_error():
    envelope = {"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到文件"}}
    body = content_of(format_tool_message("sales", "c", envelope))
    assert body["status"] == "error" and body["error_code"] == "FILE_NOT_FOUND"
    assert body["error"] == "找不到文件"


def test_plain_value_counts_as_success():
    body = content_of(format_tool_message("t", "c", [1, 2, 3]))
    assert body["status"] == "success" and body["result"] == [1, 2, 3]


def test_exception_counts_as_failure_with_its_classification():
    body = content_of(format_tool_message("t", "c", PermissionError("denied")))
    assert body["status"] == "error"
    assert body["error_type"] == "fatal"
    assert "权限" in body["error"]


# --- the other two wire formats ----------------------------------------------------------------------------

def test_openai_responses_format():
    message = format_tool_message("t", "call_9", ToolResult("t", "ok"), fmt="openai_responses")
    assert set(message) == {"type", "call_id", "output"}
    assert message["type"] == "function_call_output"
    assert message["call_id"] == "call_9"
    assert content_of(message)["result"] == "ok"


def test_anthropic_format_marks_errors():
    ok = format_tool_message("t", "toolu_1", ToolResult("t", "ok"), fmt="anthropic")
    assert ok["type"] == "tool_result" and ok["tool_use_id"] == "toolu_1" and ok["is_error"] is False
    failed = format_tool_message("t", "toolu_2", ToolResult("t", None, "boom"), fmt="anthropic")
    assert failed["is_error"] is True
    assert content_of(failed)["error"] == "boom"


def test_anthropic_partial_is_not_an_error():
    partial = ToolResult("t", [1], "缺失", error_type="partial", missing="x")
    assert format_tool_message("t", "id", partial, fmt="anthropic")["is_error"] is False


@pytest.mark.parametrize("call_id", ["", None, 123])
def test_missing_tool_call_id_is_refused(call_id):
    with pytest.raises(ValueError, match="tool_call_id"):
        format_tool_message("t", call_id, "x")


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="openai_chat"):
        format_tool_message("t", "c", "x", fmt="gemini")


# --- never raises ------------------------------------------------------------------------------------------------

class _Weird:
    def __str__(self):
        raise RuntimeError("no str")


@pytest.mark.parametrize("data, check", [
    (dt.datetime(2024, 5, 1, 8, 30), lambda r: r == "2024-05-01T08:30:00"),
    (b"raw bytes", lambda r: r == "raw bytes"),
    (decimal.Decimal("9692.00"), lambda r: r == "9692.00"),
    ({"b", "a"}, lambda r: r == ["a", "b"]),
    (math.nan, lambda r: r == "nan"),
    ({"x": math.inf}, lambda r: r == {"x": "inf"}),
    (_Weird(), lambda r: "_Weird" in r),
    (object(), lambda r: "object" in r),
    (10 ** 5000, lambda r: "5001" in r),
    ({1: "a", (2, 3): "b"}, lambda r: r == {"1": "a", "(2, 3)": "b"}),
], ids=["datetime", "bytes", "decimal", "set", "nan", "inf", "str_raises", "object", "huge_int", "non_str_keys"])
def test_unserializable_data_never_raises_and_stays_faithful(data, check):
    for fmt in ("openai_chat", "openai_responses", "anthropic"):
        body = content_of(format_tool_message("t", "c", ToolResult("t", data), fmt=fmt))
        assert body["status"] == "success"
        assert check(body["result"]), body["result"]


def test_self_reference_never_raises():
    loop: dict = {}
    loop["me"] = loop
    body = content_of(format_tool_message("t", "c", ToolResult("t", loop)))
    assert "循环引用" in body["result"]["me"]


def test_lone_surrogate_content_can_still_be_sent_as_utf8():
    message = format_tool_message("t", "c", ToolResult("t", "abc\ud800def"))
    message["content"].encode("utf-8")
    assert content_of(message)["result"].startswith("abc")


def test_huge_result_is_bounded_and_keeps_the_status_fields():
    message = format_tool_message("t", "c", ToolResult("t", "x" * 500_000, duration_ms=3.0))
    assert len(message["content"]) <= MESSAGE_MAX_CHARS
    body = json.loads(message["content"])
    assert body["status"] == "success" and body["execution_time_ms"] == 3.0
    assert body["result"].startswith("xxx")


def test_nan_duration_still_gives_valid_json():
    message = format_tool_message("t", "c", ToolResult("t", 1, duration_ms=math.nan))
    assert content_of(message)["result"] == 1


# --- task context ------------------------------------------------------------------------------------------------

def test_task_context_block_matches_the_article():
    context = TaskContext("查询天气和航班", ["查上海天气", "查今天北京飞上海的航班"], done=1)
    assert context.render() == ("[TASK_CONTEXT]\n"
                                "当前任务：查询天气和航班\n"
                                "已完成步骤：1/2\n"
                                "已完成：查上海天气\n"
                                "下一步：查今天北京飞上海的航班\n"
                                "[/TASK_CONTEXT]")


def test_task_context_when_every_step_is_done():
    context = TaskContext("t", ["a", "b"], done=2)
    text = context.render()
    assert "已完成步骤：2/2" in text and "已完成：a；b" in text and "所有步骤已完成" in text


def test_advance_never_goes_past_the_last_step():
    context = TaskContext("t", ["a"])
    assert context.advance().done == 1
    assert context.advance().done == 1


def test_task_context_round_trips():
    context = TaskContext("查询天气和航班", ["查上海天气", "查航班"], done=1)
    content = json.dumps({"status": "success", "result": "晴"}, ensure_ascii=False)
    wrapped = with_task_context(content, context)
    assert wrapped.startswith("[TASK_CONTEXT]\n")
    assert "当前 Tool 调用结果：" in wrapped
    assert split_task_context(wrapped) == (context.render(), content)


def test_split_without_context_returns_the_content_unchanged():
    assert split_task_context('{"a": 1}') == (None, '{"a": 1}')


def test_format_with_task_context_puts_the_block_first_and_keeps_json_after_it():
    context = TaskContext("查询天气和航班", ["查上海天气", "查航班"], done=1)
    message = format_tool_message("weather", "c1", ToolResult("weather", {"上海": "晴"}), task_context=context)
    block, rest = split_task_context(message["content"])
    assert block == context.render()
    assert json.loads(rest)["result"] == {"上海": "晴"}


def test_round_trip_with_content_that_mentions_the_marker():
    context = TaskContext("t", ["a"])
    content = "结果里也写着 当前 Tool 调用结果： 这几个字\n当前 Tool 调用结果：\nmore"
    assert split_task_context(with_task_context(content, context)) == (context.render(), content)


@pytest.mark.parametrize("done", [-1, 3, 1.5])
def test_task_context_refuses_a_done_count_outside_its_steps(done):
    with pytest.raises(ValueError, match="done 是已经完成的步数"):
        TaskContext("t", ["a", "b"], done=done)
