"""A valid answer written with match on the result's kind, the step left undone added in one place for both
failures."""


def _empty(data):
    match data:
        case None | []:
            return True
        case dict():  # a mapping pattern {} would match every dict: test the length
            return len(data) == 0
        case str():
            return data.strip() in ("", "[]", "{}")
    return False


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    match (result.status, result.error_type):
        case ("partial", _):
            return {"action": "present_partial", "data": result.data, "missing": result.missing or result.error,
                    "suggestion": "把已经拿到的先给用户，并说明缺了什么"}
        case ("error", kind):
            action = "retry" if kind == "retryable" else "report_error"
            suggestion = "可以稍后再试一次" if action == "retry" else "告诉用户这一步失败了，别编造"
            if next_step:
                suggestion += f"；没做的一步：{next_step}"
            return {"action": action, "suggestion": suggestion}
    if broadened_from:
        dropped = "、".join(f"{key}={value}" for key, value in broadened_from.items())
        said = f"去掉 {dropped} 之后也没有：告诉用户没有" if _empty(result.data) else f"这些记录不满足 {dropped}"
        return {"action": "present_broadened", "data": result.data, "suggestion": said}
    if _empty(result.data):
        return {"action": "retry_with_broader_query", "suggestion": "换宽一点的条件再查"}
    if next_step:
        return {"action": "call_more_tools", "next_step": next_step, "data": result.data,
                "suggestion": f"下一步：{next_step}"}
    if result.truncated:
        return {"action": "summarize_and_present", "data": result.data, "suggestion": "按摘要回答"}
    return {"action": "present_directly", "data": result.data, "suggestion": f"回答用户：{user_query}"}
