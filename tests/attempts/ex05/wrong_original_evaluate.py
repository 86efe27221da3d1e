"""The original course's evaluate_tool_result: `not result.data` calls 0 empty, every failure is reported.

fails: partial_branch | present_partial
fails: partial_says_missing | missing
fails: zero_is_not_empty | 今天 0 笔订单也是答案
fails: empty_results_broaden | '  '
fails: retryable_retry | 可重试的失败
fails: long_result_summarized_as_json | 坏 JSON
fails: random_results | 应为
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
