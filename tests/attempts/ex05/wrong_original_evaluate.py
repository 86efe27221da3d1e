"""The original course's evaluate_tool_result: two parameters, `not result.data` calls 0 empty, every failure reported.

fails: chapter_branches_kept | present_partial
fails: more_tools_when_a_step_is_left | next_step
fails: last_step_answers_directly | next_step
fails: failures_come_first | next_step
fails: failure_says_what_is_left | next_step
fails: broadened_says_what_is_not_met | broadened_from
fails: broadened_empty_not_broadened_again | broadened_from
fails: random_results | next_step
"""


def decide_next_step(result, user_query):
    if result.error:
        return {"action": "report_error", "message": f"工具调用失败: {result.error}",
                "suggestion": "请检查输入参数或稍后重试"}
    if not result.data or result.data in ("[]", "{}"):
        return {"action": "retry_with_broader_query", "message": "查询结果为空",
                "suggestion": "尝试使用更宽泛的搜索条件"}
    data_str = str(result.data)
    if len(data_str) > 5000:
        return {"action": "summarize_and_present", "message": "结果较多，已为您汇总", "data": data_str[:3000]}
    return {"action": "present_directly", "message": "查询成功", "data": result.data}
