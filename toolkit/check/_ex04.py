"""Exercise 04: format_for_model — the Chat Completions and the Anthropic form of a tool message."""
from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

from ..results import ToolResult
from ._core import Check, Exercise, Fail, Raised
from ._plain import describe
from ._props import property_check

OK = ToolResult("analyze_sales_csv", {"highest_category": "显示器", "total_sales": 9692}, duration_ms=12.34)
FATAL = ToolResult("analyze_sales_csv", None, "找不到 sales.csv", error_type="fatal", error_code="FILE_NOT_FOUND")
RETRY = ToolResult("get_weather", None, "请求超时，可以稍后重试", error_type="retryable", error_code="TIMEOUT", attempts=4)
PARTIAL = ToolResult("get_weather", {"上海": "晴"}, "部分结果缺失：北京", error_type="partial", missing="北京")


def _content(message: Any, key: str) -> dict:
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


def check_chat(play: Any) -> None:
    msg = play("analyze_sales_csv", "call_1", OK)
    if not isinstance(msg, dict) or msg.get("role") != "tool" or msg.get("tool_call_id") != "call_1":
        raise Fail(f"默认格式应是 {{'role': 'tool', 'tool_call_id': 'call_1', 'content': ...}}，得到 {str(msg)[:100]}")
    payload = _content(msg, "content")
    if payload.get("result") != OK.data:
        raise Fail(f"content 里的 result 应是工具数据，得到 {payload.get('result')!r}")


def check_anthropic(play: Any) -> None:
    msg = play("analyze_sales_csv", "toolu_01", OK, fmt="anthropic")
    if not isinstance(msg, dict):
        raise Fail(f"应该返回 dict，得到 {describe(msg)}")
    want = {"type": "tool_result", "tool_use_id": "toolu_01"}
    got = {k: msg.get(k) for k in want}
    if got != want:
        raise Fail(f"Anthropic 格式应有 {want}，得到 {got}")
    if "role" in msg or "tool_call_id" in msg:
        raise Fail("Anthropic 的 tool_result 块里没有 role / tool_call_id（那是 OpenAI 的写法）")
    payload = _content(msg, "content")
    if payload.get("result") != OK.data:
        raise Fail(f"content 里的 result 应是工具数据，得到 {payload.get('result')!r}")


def check_is_error(play: Any) -> None:
    for result, want in ((OK, False), (FATAL, True), (RETRY, True), (PARTIAL, False)):
        msg = play(result.name, "toolu_02", result, fmt="anthropic")
        if not isinstance(msg, dict) or msg.get("is_error") is not want:
            raise Fail(f"status 为 {result.status} 时 is_error 应是 {want}，得到 "
                       f"{msg.get('is_error') if isinstance(msg, dict) else msg!r}")


def check_status(play: Any) -> None:
    for result in (OK, FATAL, RETRY, PARTIAL):
        for fmt, key in (("openai_chat", "content"), ("anthropic", "content")):
            payload = _content(play(result.name, "call_3", result, fmt=fmt), key)
            if payload.get("status") != result.status:
                raise Fail(f"{fmt} 格式：结果状态是 {result.status}，content 里 status 是 {payload.get('status')!r}")


def check_error_type(play: Any) -> None:
    for result in (FATAL, RETRY, PARTIAL):
        payload = _content(play(result.name, "call_4", result), "content")
        if payload.get("error_type") != result.error_type:
            raise Fail(f"失败结果应带 error_type={result.error_type!r}（告诉模型重试有没有用），"
                       f"得到 {payload.get('error_type')!r}")
        if payload.get("error") != result.error:
            raise Fail(f"content 里的 error 应是 {result.error!r}，得到 {payload.get('error')!r}")


def check_time(play: Any) -> None:
    payload = _content(play(OK.name, "call_5", OK), "content")
    if payload.get("execution_time_ms") != 12.3:
        raise Fail(f"execution_time_ms 应是 duration_ms 保留一位小数（12.3），得到 {payload.get('execution_time_ms')!r}")


def check_chinese(play: Any) -> None:
    msg = play(OK.name, "call_6", OK)
    text = msg.get("content", "") if isinstance(msg, dict) else ""
    if "显示器" not in text:
        raise Fail("中文被转义成了 \\uXXXX：json.dumps 要加 ensure_ascii=False")


def check_unserializable(play: Any) -> None:
    data = {"时间": dt.datetime(2024, 5, 1, 9, 30), "金额": decimal.Decimal("12.50"), "标签": {"新品"}}
    result = ToolResult("query", data)
    payload = _content(play("query", "call_7", result), "content")
    shown = json.dumps(payload.get("result"), ensure_ascii=False)
    if "2024-05-01" not in shown or "12.5" not in shown or "新品" not in shown:
        raise Fail(f"datetime / Decimal / set 应变成可读的文字，得到 {shown[:100]}")


def _raises_value_error(play: Any, why: str, *args: Any, **kwargs: Any) -> None:
    try:
        out = play(*args, **kwargs)
    except Raised as exc:
        if exc.is_a("NotImplementedError"):
            raise
        if exc.is_a("ValueError"):
            return
        raise Fail(f"{why}应抛出 ValueError，你抛出了 {exc}") from None
    raise Fail(f"{why}应抛出 ValueError，不要默默返回（你返回了 {describe(out)}）")


def check_errors(play: Any) -> None:
    _raises_value_error(play, "未知的 fmt（例如 'xml'）", OK.name, "call_8", OK, fmt="xml")
    _raises_value_error(play, "tool_call_id 为空时（模型没法把结果对应到它的调用）", OK.name, "", OK)


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                          max_size=3),
                              max_leaves=10)
    cases = st.tuples(json_value, st.sampled_from([None, "fatal", "retryable", "partial"]),
                      st.floats(0, 1e6, allow_nan=False), st.sampled_from(["openai_chat", "anthropic"]))

    def classify(case: tuple) -> set[str]:
        data, kind, _, fmt = case
        return {fmt, {None: "success"}.get(kind, "partial" if kind == "partial" else "error"),
                "嵌套数据" if isinstance(data, (list, dict)) and data else "简单数据"}

    def test(case: tuple) -> None:
        data, kind, ms, fmt = case
        result = ToolResult("t", data, None if kind is None else "出错了", error_type=kind, duration_ms=ms)
        payload = _content(play("t", "call_9", result, fmt=fmt), "content")
        if payload.get("status") != result.status:
            raise Fail(f"随机结果 {result!r}：status 应为 {result.status}，得到 {payload.get('status')!r}")

    property_check(cases, test, examples=40, classify=classify,
                   cover={"openai_chat": 10, "anthropic": 10, "success": 6, "partial": 6, "error": 12,
                          "嵌套数据": 8, "简单数据": 8})


EXERCISE = Exercise("04", "04_tool_messages", "把结果交还模型：Chat Completions 与 Anthropic 两种格式", "format_for_model", (
    Check("chat_shape", "默认 openai_chat：role=tool、tool_call_id、content 是 JSON 文本",
          "return {'role': 'tool', 'tool_call_id': tool_call_id, 'content': 文本}", check_chat),
    Check("anthropic_shape", "fmt='anthropic'：type=tool_result、tool_use_id、content",
          "Anthropic 用 tool_use_id，不是 tool_call_id；块里没有 role", check_anthropic),
    Check("anthropic_is_error", "Anthropic 的 is_error：只有 status 为 error 时为 True", "is_error = result.status == 'error'",
          check_is_error),
    Check("content_has_status", "content 里有 status（success / partial / error）（常见坑 4）",
          "直接用 result.status", check_status),
    Check("error_type_present", "失败时 content 带 error 和 error_type", "error_type 告诉模型重试有没有用",
          check_error_type),
    Check("execution_time", "execution_time_ms 保留一位小数", "round(result.duration_ms, 1)", check_time),
    Check("chinese_readable", "中文不被转义", "json.dumps(..., ensure_ascii=False)", check_chinese),
    Check("unserializable_data", "datetime、Decimal、set 不会让 json.dumps 崩溃",
          "json.dumps(..., default=...) 把它们变成文字；set 可以先变成 list", check_unserializable),
    Check("bad_arguments_raise", "未知 fmt 或空 tool_call_id 抛出 ValueError", "先检查参数，再拼消息", check_errors),
    Check("random_results", "随机生成的 40 个结果：content 总是合法 JSON，status 正确（hypothesis）",
          "data 可能是 None、嵌套列表、空字符串……", check_random),
))
