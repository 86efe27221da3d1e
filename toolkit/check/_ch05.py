"""Chapter 05's own checks: the classroom evaluate_tool_result, step by step (failures by kind, the partial
branch, empty versus 0 and False, a result the executor cut kept as it is)."""
from __future__ import annotations

import json
from typing import Any

from ..decisions import ACTIONS
from ..results import ToolResult
from ._core import Check, Exercise, Fail
from ._plain import describe

QUERY = "上海和北京今天的天气"
PARTIAL = ToolResult("get_weather", {"上海": {"天气": "晴", "最高气温": 26}}, "部分结果缺失：北京的天气接口超时",
                     error_type="partial", missing="北京的天气接口超时")
ORDERS = [{"order_id": f"A{i:04d}", "city": "上海", "status": "已完成"} for i in range(20)]
CUT = ToolResult("search_orders", [*ORDERS, "…还有 99 项未显示（共 119 项）"], truncated=True)


def decide(play: Any, result: ToolResult, *args: Any, **kwargs: Any) -> dict:
    """The student's decision for `result`: a dict whose action is one of the toolkit's ACTIONS (else Fail)."""
    out = play(result, QUERY, *args, **kwargs)
    if not isinstance(out, dict):
        raise Fail(f"应返回带 action 的 dict，得到 {describe(out)}")
    if out.get("action") not in ACTIONS:
        raise Fail(f"action 应是 {list(ACTIONS)} 之一，得到 {describe(out.get('action'))}")
    return out


def expect_action(play: Any, result: ToolResult, action: str, why: str, **kwargs: Any) -> dict:
    out = decide(play, result, **kwargs)
    if out["action"] != action:
        raise Fail(f"{why}：应为 {action}，得到 {out['action']}")
    return out


def check_partial(play: Any) -> None:
    out = expect_action(play, PARTIAL, "present_partial", "部分成功（上海有结果，北京缺失）")
    if out.get("data") != PARTIAL.data:
        raise Fail(f"present_partial 要带上已拿到的数据 data={PARTIAL.data}，得到 {out.get('data')!r}")


def check_partial_missing(play: Any) -> None:
    out = decide(play, PARTIAL)
    if "北京" not in str(out.get("missing", "")):
        raise Fail(f"present_partial 要用 missing 字段说明缺了什么（北京），得到 {out.get('missing')!r}")


def check_retryable(play: Any) -> None:
    expect_action(play, ToolResult("get_weather", None, "请求超时", error_type="retryable", error_code="TIMEOUT"),
                  "retry", "可重试的失败（超时）")


def check_fatal(play: Any) -> None:
    out = expect_action(play, ToolResult("read_file", None, "权限不足", error_type="fatal",
                                         error_code="PERMISSION_DENIED"), "report_error", "不可重试的失败（权限不足）")
    if not str(out.get("suggestion", "")).strip():
        raise Fail("report_error 要给出 suggestion（告诉用户下一步怎么办）")


def check_zero(play: Any) -> None:
    for value in (0, 0.0, False):
        expect_action(play, ToolResult("count_orders", value), "present_directly",
                      f"结果是 {value!r}（今天 0 笔订单也是答案）")


def check_empty(play: Any) -> None:
    empties: tuple[Any, ...] = (None, "", "  ", [], {}, "[]", "{}")
    for value in empties:
        expect_action(play, ToolResult("search", value), "retry_with_broader_query", f"结果是 {value!r}（空）")


def check_cut(play: Any) -> None:
    out = expect_action(play, CUT, "summarize_and_present", "执行器已经截断的结果（truncated=True）")
    data = out.get("data")
    try:
        summary = json.loads(data) if isinstance(data, str) else data
    except ValueError:
        raise Fail(f"摘要不是合法 JSON，模型读到的是坏 JSON：…{str(data)[-40:]!r}") from None
    if summary != CUT.data:
        raise Fail("执行器已经按预算截断过了：摘要就是它的结果，不要再截一次（「共 119 项」的说明会丢），"
                   f"得到 …{str(data)[-60:]!r}")


def check_short(play: Any) -> None:
    out = expect_action(play, ToolResult("get_weather", {"上海": "晴"}, truncated=False), "present_directly",
                        "简短的成功结果")
    if out.get("data") != {"上海": "晴"}:
        raise Fail(f"present_directly 要带上 data，得到 {out.get('data')!r}")
    if QUERY not in str(out.get("suggestion", "")):
        raise Fail(f"present_directly 的 suggestion 要写进用户的问题（{QUERY}），得到 {out.get('suggestion')!r}")


PARTIAL_CHECKS = (
    Check("partial_branch", "部分成功 → present_partial，并带上已拿到的 data",
          "先判断 result.status == 'partial'（部分成功也带着 error 文字）", check_partial),
    Check("partial_says_missing", "present_partial 用 missing 说明缺了什么", "missing = result.missing 或 result.error",
          check_partial_missing),
)
FAILURE_CHECKS = (
    Check("retryable_retry", "可重试的失败 → retry", "看 result.error_type == 'retryable'", check_retryable),
    Check("fatal_report_with_suggestion", "不可重试的失败 → report_error，并给 suggestion", "原课程所有失败都一样处理",
          check_fatal),
)
EMPTY_CHECKS = (
    Check("zero_is_not_empty", "结果 0、0.0、False 是答案，不是空（原课程 not result.data 的 bug）",
          "只有 None、空白字符串、空列表/字典、'[]'、'{}' 算空", check_zero),
    Check("empty_results_broaden", "空结果 → retry_with_broader_query", "注意 '  ' 和 '[]' 这样的字符串", check_empty),
)

EXERCISE = Exercise("ch05", "05_decisions", "课堂版 evaluate_tool_result", "evaluate_tool_result", (
    *PARTIAL_CHECKS, *FAILURE_CHECKS, *EMPTY_CHECKS,
    Check("cut_result_kept", "执行器截断过的结果 → summarize_and_present，摘要就是它的结果（不再截一次）",
          "看 result.truncated；data 用 result.data 本身", check_cut),
    Check("short_result_presented", "简短的成功结果 → present_directly，带上 data 和用户的问题",
          "最后一个分支", check_short),
))
