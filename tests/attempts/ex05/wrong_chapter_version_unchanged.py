"""The chapter's classroom version with the two new parameters added and never read.

fails: more_tools_when_a_step_is_left | call_more_tools
fails: failure_says_what_is_left | 还没做的那一步
fails: broadened_says_what_is_not_met | present_broadened
fails: broadened_empty_not_broadened_again | present_broadened
fails: random_results | 应为
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
            return {"action": "retry", "suggestion": "稍后重试或换用备用工具，不要无限重试"}
        return {"action": "report_error", "suggestion": "如实告诉用户失败的原因，不要编造结果"}
    if is_empty(result.data):
        return {"action": "retry_with_broader_query", "suggestion": f"放宽条件重新查询（原问题：{user_query}）"}
    if result.truncated:
        return {"action": "summarize_and_present", "data": result.data, "suggestion": "基于摘要回答"}
    return {"action": "present_directly", "data": result.data, "suggestion": f"直接依据结果回答：{user_query}"}
