"""The step left undone is named where the call will be retried, not where the failure is reported: the fatal
branch, the one that ends this step for good, still lets the model say only "this step failed".

fails: failure_says_what_is_left | 不可重试的失败
"""


def is_empty(data):
    if data is None:
        return True
    if isinstance(data, str):
        return data.strip() in ("", "[]", "{}")
    return isinstance(data, (list, dict)) and len(data) == 0


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    if result.status == "partial":
        return {"action": "present_partial", "data": result.data, "missing": result.missing or result.error,
                "suggestion": "先展示已拿到的部分，再说明缺了什么"}
    if result.status == "error":
        if result.error_type == "retryable":
            suggestion = "稍后重试或换用备用工具，不要无限重试"
            if next_step:
                suggestion += f"；重试成功后还要做：{next_step}"
            return {"action": "retry", "suggestion": suggestion}
        return {"action": "report_error", "suggestion": "如实告诉用户失败的原因，不要编造结果"}
    if broadened_from:
        dropped = "、".join(f"{k}={v}" for k, v in broadened_from.items())
        if is_empty(result.data):
            return {"action": "present_broadened", "data": result.data, "suggestion": f"去掉 {dropped} 后仍然没有结果"}
        return {"action": "present_broadened", "data": result.data,
                "suggestion": f"这些记录不满足 {dropped}，不是原问题要的"}
    if is_empty(result.data):
        return {"action": "retry_with_broader_query", "suggestion": f"放宽条件重新查询（原问题：{user_query}）"}
    if next_step:
        return {"action": "call_more_tools", "data": result.data, "suggestion": f"接着调用工具：{next_step}"}
    if result.truncated:
        return {"action": "summarize_and_present", "data": result.data, "suggestion": "基于摘要回答"}
    return {"action": "present_directly", "data": result.data, "suggestion": f"直接依据结果回答：{user_query}"}
