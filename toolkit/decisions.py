"""Deciding what to do with a result: evaluate_tool_result and its eight actions, and what the model reads of it.

The decision tree of chapter 05: success + enough -> present_directly; success + empty ->
retry_with_broader_query; too long -> summarize_and_present; retryable
failure -> retry; fatal failure -> report_error (with a suggestion that fits
the error: the tool's own suggestion from its ToolKnowledge, else a general
one); partial -> present_partial (what arrived, and what is missing).
Success while the task has a step left (`next_step`) -> call_more_tools; a result
the program got by dropping conditions (`broadened_from`) -> present_broadened,
saying what the data does not show.
Code frames the choices; the model chooses among them. `apply_decision` is the
agent loop acting on a decision: the result as the decision presents it.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal, Mapping, Required, TypedDict

from .fitting import fit_and_redact
from .knowledge import knowledge_for
from .parsing import parse_tool_result
from .redaction import safe_str
from .results import FATAL, RETRYABLE, ErrorCode, ToolResult
from .shrink import exceeds

__all__ = ["Decision", "Action", "evaluate_tool_result", "apply_decision", "suggestion_for", "ACTIONS", "SUGGESTIONS",
           "LONG_RESULT_CHARS"]

Action = Literal["present_directly", "retry_with_broader_query", "summarize_and_present", "retry", "report_error",
                 "present_partial", "present_broadened", "call_more_tools"]
ACTIONS: tuple[Action, ...] = ("present_directly", "retry_with_broader_query", "summarize_and_present",
                               "retry", "report_error", "present_partial", "present_broadened", "call_more_tools")
LONG_RESULT_CHARS = 5000


class Decision(TypedDict, total=False):
    """What evaluate_tool_result decides about one result: a plain dict, typed. `action`, `message` (for a
    person) and `suggestion` (for the model) are always there; the other keys come with the actions that use
    them. An evaluate plug-in may return any dict with an "action"; the loop reads "action" and "suggestion"."""

    action: Required[Action]
    message: Required[str]
    suggestion: Required[str]
    data: Any                # what is presented: present_directly, present_partial, present_broadened,
                             # summarize_and_present (the summary), call_more_tools
    missing: str | None      # present_partial: what did not arrive
    error_type: str          # retry, report_error
    error_code: str | None   # report_error
    attempts: int            # retry: how many attempts the executor made
    dropped: str             # present_broadened: the conditions the program dropped, in words
    next_step: str           # call_more_tools: the task's step still to do


SUGGESTIONS: dict[str, str] = {
    ErrorCode.PERMISSION_DENIED: "请用户授权或换一个有权限的操作，不要自行猜测权限",
    ErrorCode.FORBIDDEN: "请用户授权或换一个有权限的操作，不要自行猜测权限",
    ErrorCode.UNAUTHORIZED: "请用户检查 API Key 等凭据配置",
    ErrorCode.INVALID_ARGUMENTS: "根据错误信息修正参数后再调用",
    ErrorCode.INVALID_ARGUMENTS_JSON: "重新生成合法的 JSON 参数后再调用",
    ErrorCode.BAD_REQUEST: "根据错误信息修正参数后再调用",
    ErrorCode.UNKNOWN_TOOL: "只调用已注册的工具",
    ErrorCode.NOT_FOUND: "检查名称或路径是否正确；如实告诉用户没有找到",
    "FILE_NOT_FOUND": "告诉用户数据文件缺失，不要编造结果",  # the course tools' own code
    ErrorCode.CIRCUIT_OPEN: "该工具连续失败，暂时停用；换用备用工具或稍后再试",
    ErrorCode.UNKNOWN: "记录日志，交给人工处理；如实告诉用户出错了",
}


def suggestion_for(tool_name: str, code: str) -> str:
    """What to do about error `code` of tool `tool_name`: the tool's own suggestion (its ToolKnowledge)
    first, then the toolkit's general one, then a default."""
    own = knowledge_for(tool_name).suggestions.get(code)
    return own or SUGGESTIONS.get(code, "向用户解释失败原因并建议替代方案，不要编造结果")


def _is_empty(data: Any) -> bool:
    """Empty means no content: None, "", [], {}, "[]", "{}" (0 and False are answers)."""
    if data is None:
        return True
    if isinstance(data, str):
        return data.strip() in ("", "[]", "{}", "null")
    if isinstance(data, (list, tuple, dict, set, frozenset)):
        return len(data) == 0
    return False


def _summary(result: ToolResult, limit: int) -> Any:
    """The summary to present when `result` is too long for an answer, else None.

    A result the executor cut (`truncated`) is already the budgeted view, with notes
    saying how much was left out ("共 N 项"): its data is the summary, handed on as it
    is (never cut again, which would count the first cut's notes as items, nor written
    out as text to be read back). Otherwise a result whose JSON is longer than `limit`
    is summarized to about `limit` characters of JSON text, once.
    """
    data = result.data
    if result.truncated:
        return data
    too_long = len(data) > limit if isinstance(data, str) else exceeds(data, limit)
    return parse_tool_result(data, max_tokens=max(limit // 4, 1)) if too_long else None


def _conditions(dropped: Any) -> str:
    """The dropped conditions in words: {"status": "退款中"} -> 'status=退款中'."""
    if isinstance(dropped, Mapping):
        return "、".join(f"{safe_str(k, 40)}={safe_str(v, 60)}" for k, v in list(dropped.items())[:5]) or "部分条件"
    return safe_str(dropped, 200) or "部分条件"


def evaluate_tool_result(result: ToolResult, user_query: str, long_chars: int = LONG_RESULT_CHARS, *,
                         next_step: str | None = None, broadened_from: Mapping | None = None) -> Decision:
    """Choose the next step for `result` of a tool called to answer `user_query`.

    Returns a Decision {"action", "message", "suggestion", ...}: action is one of ACTIONS.
    Failures are split by error_type (retryable vs fatal), a partial result is
    presented with what is missing, and a long result is summarize_and_present:
    one the executor cut (`result.truncated`) with its data as it is, the budgeted
    view; one longer than `long_chars` with a summary of about `long_chars`
    characters as valid JSON text, never cut mid-token. `next_step`: the step of the task still to do after this
    one (the agent loop passes it from its TaskContext); a success then means
    call_more_tools. `broadened_from`: the conditions the program dropped to get
    this result (e.g. {"status": "退款中"}); a success or an empty result is then
    present_broadened, with a suggestion saying the data does not meet them.
    The agent loop puts the action and the suggestion in the tool message the
    model reads, and acts on the action (`apply_decision`).
    Raises TypeError when `result` is not a ToolResult.
    """
    if not isinstance(result, ToolResult):
        raise TypeError(f"evaluate_tool_result 需要一个 ToolResult，收到 {type(result).__name__}："
                        "请先包成 ToolResult(工具名, 数据)，或传执行器返回的结果")
    query = safe_str(user_query, 100)
    if result.status == "partial":
        return {"action": "present_partial", "message": "部分成功：先展示已拿到的结果",
                "missing": result.missing or result.error,
                "suggestion": "向用户说明缺失的部分；需要时只为缺失部分再调用一次工具",
                "data": result.data}
    if result.status == "error":
        code = result.error_code or ""
        if result.error_type == RETRYABLE:
            tried = f"已自动尝试 {result.attempts} 次；" if result.attempts > 1 else ""
            return {"action": "retry", "message": f"工具调用暂时失败: {result.error}",
                    "error_type": RETRYABLE, "attempts": result.attempts,
                    "suggestion": f"{tried}稍后重试、修改参数或换用备用工具；不要无限重试"}
        return {"action": "report_error", "message": f"工具调用失败: {result.error}",
                "error_type": result.error_type or FATAL, "error_code": code or None,
                "suggestion": suggestion_for(result.name, code)}
    empty = _is_empty(result.data)
    if broadened_from:
        dropped = _conditions(broadened_from)
        found = "放宽后仍然没有结果：如实告诉用户没有，不要再放宽" if empty else (
            f"这些记录不满足 {dropped}，不是原问题要的；先说明没有符合原条件的结果，再把它们作为参考列出")
        return {"action": "present_broadened", "message": f"原条件下没有结果，去掉 {dropped} 后再查",
                "dropped": dropped, "data": result.data,
                "suggestion": f"按原条件（{dropped}）查询为空，程序去掉了它再查；{found}"}
    if empty:
        return {"action": "retry_with_broader_query", "message": "查询结果为空",
                "suggestion": f"放宽条件重新查询（原问题：{query}）；仍为空就如实告诉用户没有结果"}
    if next_step:
        step = safe_str(next_step, 100)
        return {"action": "call_more_tools", "message": "这一步成功，但任务还没完成", "next_step": step,
                "data": result.data, "suggestion": f"这一步的结果已拿到；接着调用工具完成：{step}；全部完成后再回答"}
    summary = _summary(result, long_chars)
    if summary is not None:
        return {"action": "summarize_and_present", "message": "结果较多，先摘要再回答", "data": summary,
                "suggestion": "基于摘要回答；需要细节时缩小范围再查"}
    return {"action": "present_directly", "message": "查询成功，信息足以回答", "data": result.data,
            "suggestion": f"直接依据结果回答：{query}"}


def apply_decision(result: ToolResult, decision: Mapping[str, Any], max_chars: int) -> ToolResult:
    """The result as `decision` presents it to the model (the agent loop acting on a decision).

    present_directly on a partial result: shown as a complete success (what is missing is no longer
    said: the decision chose so). summarize_and_present: the result as it is when the decision's "data"
    is the result's own (evaluate_tool_result hands a cut result's data on as it is); other "data" is new
    data the decision made (a summary of a long result the executor did not cut, a plug-in's own value):
    it replaces the result's (a JSON text read into data), budgeted to `max_chars` and redacted once, like
    tool output (`truncated` True). Anything else is shown as it is, and so is every failed result: a
    decision never turns a failure into data.
    """
    action = decision.get("action") if isinstance(decision, Mapping) else None
    if not isinstance(action, str) or result.status == "error":
        return result
    if action == "present_directly" and result.status == "partial":
        return replace(result, error=None, error_type=None, error_code=None, missing=None)
    if action == "summarize_and_present" and decision.get("data") is not None:
        data = decision["data"]
        if data is result.data or data == result.data:  # the result's own view: shown as it was made
            return result
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except (ValueError, RecursionError):
                pass
        if data == result.data:  # the result's own data written out as text by a plug-in
            return result
        data, _ = fit_and_redact(data, max_chars)
        return replace(result, data=data, truncated=True)  # a summary: something is left out
    return result
