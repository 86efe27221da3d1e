"""Exercise 05: decide_next_step — six decisions, a partial-result branch, 0 and False are answers."""
from __future__ import annotations

import json
from typing import Any

from ..results import ToolResult
from ._core import Check, Exercise, Fail
from ._plain import describe
from ._props import property_check

ACTIONS = ("present_directly", "retry_with_broader_query", "summarize_and_present",
           "retry", "report_error", "present_partial")
QUERY = "上海和北京今天的天气"


def _decide(play: Any, result: ToolResult) -> dict:
    out = play(result, QUERY)
    if not isinstance(out, dict):
        raise Fail(f"应返回带 action 的 dict，得到 {describe(out)}")
    if out.get("action") not in ACTIONS:
        raise Fail(f"action 应是 {list(ACTIONS)} 之一，得到 {describe(out.get('action'))}")
    return out


def _expect(play: Any, result: ToolResult, action: str, why: str) -> dict:
    out = _decide(play, result)
    if out["action"] != action:
        raise Fail(f"{why}：应为 {action}，得到 {out['action']}")
    return out


PARTIAL = ToolResult("get_weather", {"上海": {"天气": "晴", "最高气温": 26}}, "部分结果缺失：北京的天气接口超时",
                     error_type="partial", missing="北京的天气接口超时")


def check_partial(play: Any) -> None:
    out = _expect(play, PARTIAL, "present_partial", "部分成功（上海有结果，北京缺失）")
    if out.get("data") != PARTIAL.data:
        raise Fail(f"present_partial 要带上已拿到的数据 data={PARTIAL.data}，得到 {out.get('data')!r}")


def check_partial_missing(play: Any) -> None:
    out = _decide(play, PARTIAL)
    if "北京" not in str(out.get("missing", "")):
        raise Fail(f"present_partial 要用 missing 字段说明缺了什么（北京），得到 {out.get('missing')!r}")


def check_zero(play: Any) -> None:
    for value in (0, 0.0, False):
        _expect(play, ToolResult("count_orders", value), "present_directly",
                f"结果是 {value!r}（今天 0 笔订单也是答案）")


def check_empty(play: Any) -> None:
    for value in (None, "", "  ", [], {}, "[]", "{}"):
        _expect(play, ToolResult("search", value), "retry_with_broader_query", f"结果是 {value!r}（空）")


def check_retryable(play: Any) -> None:
    _expect(play, ToolResult("get_weather", None, "请求超时", error_type="retryable", error_code="TIMEOUT"),
            "retry", "可重试的失败（超时）")


def check_fatal(play: Any) -> None:
    out = _expect(play, ToolResult("read_file", None, "权限不足", error_type="fatal", error_code="PERMISSION_DENIED"),
                  "report_error", "不可重试的失败（权限不足）")
    if not str(out.get("suggestion", "")).strip():
        raise Fail("report_error 要给出 suggestion（告诉用户下一步怎么办）")


def check_long(play: Any) -> None:
    records = [{"id": i, "城市": "上海", "温度": 20 + i % 10, "说明": "多云转晴"} for i in range(500)]
    out = _expect(play, ToolResult("query", records), "summarize_and_present", "500 条记录（很长）")
    data = out.get("data")
    if not isinstance(data, str) or len(data) > 3000:
        raise Fail(f"summarize_and_present 的 data 应是不超过 3000 字符的文字，得到 {type(data).__name__}"
                   f"（{len(str(data))} 字符）")
    try:
        json.loads(data)
    except ValueError:
        raise Fail(f"摘要被截在了 JSON 中间（原课程 str(data)[:3000]），模型读到的是坏 JSON：…{data[-40:]!r}") from None


def check_short(play: Any) -> None:
    out = _expect(play, ToolResult("get_weather", {"上海": "晴"}), "present_directly", "简短的成功结果")
    if out.get("data") != {"上海": "晴"}:
        raise Fail(f"present_directly 要带上 data，得到 {out.get('data')!r}")


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                                     max_size=4),
                         max_leaves=12)
    cases = st.tuples(value, st.sampled_from([None, "fatal", "retryable", "partial"]))

    def classify(case: tuple) -> set[str]:
        data, kind = case
        return {kind or "成功", "data 是 0 / False / 空" if data in (0, False, None, "", [], {}) else "data 有内容"}

    def test(case: tuple) -> None:
        data, kind = case
        result = ToolResult("t", data, None if kind is None else "出错了", error_type=kind,
                            missing="一部分" if kind == "partial" else None)
        out = _decide(play, result)
        want = {"retryable": "retry", "fatal": "report_error", "partial": "present_partial"}.get(kind)
        if want and out["action"] != want:
            raise Fail(f"{result!r} 应为 {want}，得到 {out['action']}")

    property_check(cases, test, examples=50, classify=classify,
                   cover={"成功": 4, "fatal": 4, "retryable": 4, "partial": 4, "data 是 0 / False / 空": 6,
                          "data 有内容": 15})


EXERCISE = Exercise("05", "05_decisions", "下一步做什么：给部分成功加一个决策分支", "decide_next_step", (
    Check("partial_branch", "部分成功 → present_partial，并带上已拿到的 data（新分支）",
          "先判断 result.error_type == 'partial'，再判断其他失败", check_partial),
    Check("partial_says_missing", "present_partial 用 missing 说明缺了什么", "missing = result.missing 或 result.error",
          check_partial_missing),
    Check("zero_is_not_empty", "结果 0、0.0、False 是答案，不是空（原课程 not result.data 的 bug）",
          "只有 None、空字符串、空列表/字典、'[]'、'{}' 算空", check_zero),
    Check("empty_results_broaden", "空结果 → retry_with_broader_query", "注意 '  ' 和 '[]' 这样的字符串", check_empty),
    Check("retryable_retry", "可重试的失败 → retry", "看 result.error_type == 'retryable'", check_retryable),
    Check("fatal_report_with_suggestion", "不可重试的失败 → report_error，并给 suggestion", "原课程所有失败都一样处理",
          check_fatal),
    Check("long_result_summarized_as_json", "很长的结果 → summarize_and_present，摘要仍是合法 JSON",
          "可以用 toolkit.parse_tool_result(data, max_tokens=500) 得到不截断 JSON 的摘要", check_long),
    Check("short_result_presented", "简短的成功结果 → present_directly，带上 data", "最后一个分支", check_short),
    Check("random_results", "随机生成的 50 个结果：从不抛异常，失败类型对应正确的动作（hypothesis）",
          "data 可能是任何 JSON 值", check_random),
))
