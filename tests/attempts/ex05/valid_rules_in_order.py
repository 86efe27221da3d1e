"""A valid answer written as a list of (test, action) rules tried in order, suggestions built apart (a failure's
suggestion ends with the step left undone)."""

FAILURES = {"retryable": "retry", "fatal": "report_error"}


def _nothing_in(data):
    if isinstance(data, str):
        return not data.strip() or data.strip() in ("[]", "{}")
    return data is None or (type(data) in (list, dict) and not data)


def _suggest(action, result, user_query, next_step, dropped):
    left = f"（任务还剩「{next_step}」没做，要告诉用户）" if next_step else ""
    return {
        "present_partial": "说明缺失的部分",
        "retry": "稍后再试，不要无限重试" + left,
        "report_error": "告诉用户失败了，不要编造" + left,
        "present_broadened": (f"放宽后（去掉 {dropped}）也没有，告诉用户没有结果" if _nothing_in(result.data)
                              else f"以下记录不满足 {dropped}，只能作为参考"),
        "retry_with_broader_query": "放宽条件再查一次",
        "call_more_tools": f"还要做：{next_step}",
        "summarize_and_present": "只显示了一部分",
        "present_directly": f"回答：{user_query}",
    }[action]


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    rules = [
        (result.status == "partial", "present_partial"),
        (result.status == "error", FAILURES.get(result.error_type, "report_error")),
        (bool(broadened_from), "present_broadened"),
        (_nothing_in(result.data), "retry_with_broader_query"),
        (bool(next_step), "call_more_tools"),
        (bool(result.truncated), "summarize_and_present"),
        (True, "present_directly"),
    ]
    action = next(a for hit, a in rules if hit)
    dropped = "、".join(f"{k}={v}" for k, v in (broadened_from or {}).items())
    out = {"action": action, "suggestion": _suggest(action, result, user_query, next_step, dropped)}
    if action == "present_partial":
        out["missing"] = result.missing or result.error
    if action not in ("retry", "report_error"):
        out["data"] = result.data
    return out
