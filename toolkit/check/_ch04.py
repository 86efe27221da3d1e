"""Chapter 04's own checks: the student's format_tool_message, step by step.

The chapter grows `format_tool_message(tool_name, tool_call_id, result, fmt="openai_chat")`: the original
course code first (status from `error is None`, no error_type, crashes on datetime), then the status the
result states with error_type and a suggestion, then values json cannot serialize, then the call id and
the three wire formats. Each step runs some of these checks (`check(fn, "ch04", only=[...])`).
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

from ..results import ToolResult
from ._core import Check, Exercise, Fail, Raised
from ._plain import describe

OK = ToolResult("analyze_sales_csv", {"highest_category": "显示器", "total_sales": 9692}, duration_ms=12.34)
FATAL = ToolResult("analyze_sales_csv", None, "找不到 sales_2023.csv", error_type="fatal", error_code="FILE_NOT_FOUND")
RETRY = ToolResult("get_weather", None, "请求超时，可以稍后重试", error_type="retryable", error_code="TIMEOUT", attempts=3)
PARTIAL = ToolResult("get_weather", {"上海": "多云 28°C"}, "部分结果缺失：北京", error_type="partial", missing="北京")
ALL = (OK, FATAL, RETRY, PARTIAL)
BODY = {"openai_chat": "content", "openai_responses": "output", "anthropic": "content"}


def content_of(message: Any, key: str = "content") -> dict:
    """The JSON object a message carries under `key`, or a Chinese failure saying what is wrong with it."""
    if not isinstance(message, dict):
        raise Fail(f"应该返回 dict，得到 {describe(message)}")
    text = message.get(key)
    if not isinstance(text, str):
        raise Fail(f"{key} 必须是字符串（JSON 文本），得到 {describe(text)}")
    try:
        payload = json.loads(text)
    except ValueError:
        raise Fail(f"{key} 不是合法 JSON：{text[:60]!r}") from None
    if not isinstance(payload, dict):
        raise Fail(f"{key} 应是一个 JSON 对象，得到 {text[:60]!r}")
    return payload


def raises_value_error(play: Any, why: str, *args: Any, **kwargs: Any) -> None:
    """Fail unless the student's function raises ValueError for these arguments."""
    try:
        out = play(*args, **kwargs)
    except Raised as exc:
        if exc.is_a("NotImplementedError"):
            raise
        if exc.is_a("ValueError"):
            return
        raise Fail(f"{why}应抛出 ValueError，你抛出了 {exc}") from None
    raise Fail(f"{why}应抛出 ValueError，不要默默返回（你返回了 {describe(out)}）")


def check_chat(play: Any) -> None:
    msg = play("analyze_sales_csv", "call_1", OK)
    if not isinstance(msg, dict) or msg.get("role") != "tool" or msg.get("tool_call_id") != "call_1":
        raise Fail(f"默认格式应是 {{'role': 'tool', 'tool_call_id': 'call_1', 'content': ...}}，得到 {str(msg)[:100]}")
    payload = content_of(msg)
    if payload.get("result") != OK.data:
        raise Fail(f"content 里的 result 应是工具数据，得到 {payload.get('result')!r}")


def check_status(play: Any) -> None:
    for result in ALL:
        got = content_of(play(result.name, "call_2", result)).get("status")
        if got != result.status:
            raise Fail(f"结果的 status 是 {result.status!r}（error_type={result.error_type!r}），content 里写成了 {got!r}："
                       "部分成功不是失败，模型读到 error 就会扔掉已经拿到的数据")


def check_error_type(play: Any) -> None:
    for result in (FATAL, RETRY, PARTIAL):
        payload = content_of(play(result.name, "call_3", result))
        if payload.get("error_type") != result.error_type:
            raise Fail(f"失败结果应带 error_type={result.error_type!r}（告诉模型重试有没有用），"
                       f"得到 {payload.get('error_type')!r}")
        if payload.get("error") != result.error:
            raise Fail(f"content 里的 error 应是 {result.error!r}，得到 {payload.get('error')!r}")


def check_suggestion(play: Any) -> None:
    said = {}
    for result in (RETRY, FATAL, PARTIAL):
        suggestion = content_of(play(result.name, "call_4", result)).get("suggestion")
        if not isinstance(suggestion, str) or not suggestion.strip():
            raise Fail(f"error_type={result.error_type!r} 的结果应带一句 suggestion（下一步怎么做），得到 {suggestion!r}")
        said[result.error_type] = suggestion
    if len(set(said.values())) < 3:
        raise Fail(f"三种 error_type 的 suggestion 应各不相同（重试有用、无用、先用已有部分），得到 {said}")
    if content_of(play(OK.name, "call_4", OK)).get("suggestion"):
        raise Fail("成功的结果不需要 suggestion：没有什么要补救的")


def check_unserializable(play: Any) -> None:
    data = {"下单时间": dt.datetime(2026, 5, 1, 9, 30), "金额": decimal.Decimal("1592.00"), "标签": {"加急"},
            "备注": "已发货".encode("utf-8")}
    shown = json.dumps(content_of(play("query_orders", "call_5", ToolResult("query_orders", data))).get("result"),
                       ensure_ascii=False)
    for name, text in (("datetime", "2026-05-01"), ("Decimal", "1592.00"), ("set", "加急"), ("bytes", "已发货")):
        if text not in shown:
            raise Fail(f"{name} 应变成可读的文字（含 {text!r}），得到 {shown[:120]}")


def check_chinese(play: Any) -> None:
    msg = play(OK.name, "call_6", OK)
    text = msg.get("content", "") if isinstance(msg, dict) else ""
    if "显示器" not in str(text):
        raise Fail("中文被转义成了 \\uXXXX：json.dumps 要加 ensure_ascii=False")


def check_call_id(play: Any) -> None:
    for call_id in ("call_Ab12", "toolu_01XyZ"):
        msg = play(OK.name, call_id, OK)
        if not isinstance(msg, dict) or msg.get("tool_call_id") != call_id:
            got = msg.get("tool_call_id") if isinstance(msg, dict) else msg
            raise Fail(f"tool_call_id 应原样等于模型给的 {call_id!r}，得到 {got!r}")
    raises_value_error(play, "tool_call_id 为空时（模型没法把结果对应到它的调用）", OK.name, "", OK)


def check_wire(play: Any) -> None:
    for result in ALL:
        chat = play(result.name, "call_7", result)
        responses = play(result.name, "call_7", result, fmt="openai_responses")
        anthropic = play(result.name, "toolu_7", result, fmt="anthropic")
        for fmt, msg, want in (
                ("openai_responses", responses, {"type": "function_call_output", "call_id": "call_7"}),
                ("anthropic", anthropic, {"type": "tool_result", "tool_use_id": "toolu_7",
                                          "is_error": result.status == "error"})):
            got = {k: msg.get(k) for k in want} if isinstance(msg, dict) else msg
            if got != want:
                raise Fail(f"{fmt} 格式（结果 {result.status}）应有 {want}，得到 {str(got)[:100]}")
            if "role" in msg or "tool_call_id" in msg:
                raise Fail(f"{fmt} 的消息里没有 role / tool_call_id（那是 Chat Completions 的写法）")
        texts = [m.get(BODY[fmt]) if isinstance(m, dict) else None
                 for fmt, m in (("openai_chat", chat), ("openai_responses", responses), ("anthropic", anthropic))]
        if len(set(map(str, texts))) != 1:
            raise Fail("三种格式里的 JSON 文本应完全相同：换接口时模型读到的内容不该变")
    raises_value_error(play, "未知的 fmt（例如 'xml'）", OK.name, "call_8", OK, fmt="xml")


EXERCISE = Exercise("ch04", "04_tool_messages", "课堂版 format_tool_message，一步一步", "format_tool_message", (
    Check("chat_shape", "默认 Chat Completions：role=tool、tool_call_id、content 是 JSON 文本",
          "return {'role': 'tool', 'tool_call_id': tool_call_id, 'content': json.dumps(...)}", check_chat),
    Check("status_from_result", "content 的 status 就是 result.status（部分成功不算失败）",
          "\"status\": result.status", check_status),
    Check("error_type", "失败时 content 带 error 和 error_type", "error_type 告诉模型重试有没有用", check_error_type),
    Check("suggestion", "失败时带一句按 error_type 给的 suggestion", "一张 {error_type: 建议} 的小表", check_suggestion),
    Check("unserializable", "datetime、Decimal、set、bytes 不会让 json.dumps 崩溃",
          "json.dumps(..., default=readable)，readable 把它们变成文字", check_unserializable),
    Check("chinese_readable", "中文不被转义", "json.dumps(..., ensure_ascii=False)", check_chinese),
    Check("call_id_matched", "tool_call_id 原样回传；为空时抛出 ValueError", "if not tool_call_id: raise ValueError(...)",
          check_call_id),
    Check("wire_formats", "Responses 的 function_call_output + call_id，Anthropic 的 tool_result + tool_use_id + is_error",
          "三种格式共用同一段 JSON 文本，只换外面的包装；未知 fmt 抛出 ValueError", check_wire),
))
