"""Exercise 05: decide_next_step — six decisions, a partial-result branch, 0 and False are answers."""
from __future__ import annotations

import json
from typing import Any, Callable

from ..results import ToolResult
from ._core import Check, Exercise, Fail

ACTIONS = ("present_directly", "retry_with_broader_query", "summarize_and_present",
           "retry", "report_error", "present_partial")
QUERY = "上海和北京今天的天气"


def _decide(fn: Callable, result: ToolResult) -> dict:
    out = fn(result, QUERY)
    if not isinstance(out, dict) or out.get("action") not in ACTIONS:
        raise Fail(f"应返回带 action 的 dict，action 是 {list(ACTIONS)} 之一，得到 {str(out)[:80]}")
    return out


def _expect(fn: Callable, result: ToolResult, action: str, why: str) -> dict:
    out = _decide(fn, result)
    if out["action"] != action:
        raise Fail(f"{why}：应为 {action}，得到 {out['action']}")
    return out


PARTIAL = ToolResult("get_weather", {"上海": {"天气": "晴", "最高气温": 26}}, "部分结果缺失：北京的天气接口超时",
                     error_type="partial", missing="北京的天气接口超时")


def check_partial(fn: Callable) -> None:
    out = _expect(fn, PARTIAL, "present_partial", "部分成功（上海有结果，北京缺失）")
    if out.get("data") != PARTIAL.data:
        raise Fail(f"present_partial 要带上已拿到的数据 data={PARTIAL.data}，得到 {out.get('data')!r}")


def check_partial_missing(fn: Callable) -> None:
    out = _decide(fn, PARTIAL)
    if "北京" not in str(out.get("missing", "")):
        raise Fail(f"present_partial 要用 missing 字段说明缺了什么（北京），得到 {out.get('missing')!r}")


def check_zero(fn: Callable) -> None:
    for value in (0, 0.0, False):
        _expect(fn, ToolResult("count_orders", value), "present_directly",
                f"结果是 {value!r}（今天 0 笔订单也是答案）")


def check_empty(fn: Callable) -> None:
    for value in (None, "", "  ", [], {}, "[]", "{}"):
        _expect(fn, ToolResult("search", value), "retry_with_broader_query", f"结果是 {value!r}（空）")


def check_retryable(fn: Callable) -> None:
    _expect(fn, ToolResult("get_weather", None, "请求超时", error_type="retryable", error_code="TIMEOUT"),
            "retry", "可重试的失败（超时）")


def check_fatal(fn: Callable) -> None:
    out = _expect(fn, ToolResult("read_file", None, "权限不足", error_type="fatal", error_code="PERMISSION_DENIED"),
                  "report_error", "不可重试的失败（权限不足）")
    if not str(out.get("suggestion", "")).strip():
        raise Fail("report_error 要给出 suggestion（告诉用户下一步怎么办）")


def check_long(fn: Callable) -> None:
    records = [{"id": i, "城市": "上海", "温度": 20 + i % 10, "说明": "多云转晴"} for i in range(500)]
    out = _expect(fn, ToolResult("query", records), "summarize_and_present", "500 条记录（很长）")
    data = out.get("data")
    if not isinstance(data, str) or len(data) > 3000:
        raise Fail(f"summarize_and_present 的 data 应是不超过 3000 字符的文字，得到 {type(data).__name__}"
                   f"（{len(str(data))} 字符）")
    try:
        json.loads(data)
    except ValueError:
        raise Fail(f"摘要被截在了 JSON 中间（原课程 str(data)[:3000]），模型读到的是坏 JSON：…{data[-40:]!r}") from None


def check_short(fn: Callable) -> None:
    out = _expect(fn, ToolResult("get_weather", {"上海": "晴"}), "present_directly", "简短的成功结果")
    if out.get("data") != {"上海": "晴"}:
        raise Fail(f"present_directly 要带上 data，得到 {out.get('data')!r}")


def check_random(fn: Callable) -> None:
    from hypothesis import HealthCheck, given, settings, strategies as st
    from hypothesis.reporting import with_reporter

    value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                         max_leaves=12)
    results = st.builds(
        lambda data, kind: ToolResult("t", data, None if kind is None else "出错了", error_type=kind,
                                      missing="一部分" if kind == "partial" else None),
        value, st.sampled_from([None, "fatal", "retryable", "partial"]))

    @settings(max_examples=50, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(results)
    def prop(result: ToolResult) -> None:
        out = _decide(fn, result)
        want = {"retryable": "retry", "fatal": "report_error", "partial": "present_partial"}.get(result.error_type)
        if want and out["action"] != want:
            raise Fail(f"{result!r} 应为 {want}，得到 {out['action']}")

    with with_reporter(lambda _msg: None):
        prop()


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
