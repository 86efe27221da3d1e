# 我的工具包：evaluate（接在 run_agent(evaluate=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def is_empty(data):
    """没有内容才算空：None、空白字符串、"[]"、"{}"、空列表和空字典；0 和 False 是答案。"""
    if data is None:
        return True
    if isinstance(data, str):
        return data.strip() in ("", "[]", "{}")
    return isinstance(data, (list, dict)) and len(data) == 0

def evaluate_tool_result(result, user_query):
    """课堂版：按工具结果决定下一步，返回 {"action", "suggestion", ...}。"""
    if result.status == "partial":
        return {"action": "present_partial", "data": result.data, "missing": result.missing or result.error,
                "suggestion": "先展示已拿到的部分，再说明缺了什么"}
    if result.status == "error":
        if result.error_type == "retryable":
            return {"action": "retry", "suggestion": f"已尝试 {result.attempts} 次；稍后重试或换用备用工具，不要无限重试"}
        return {"action": "report_error", "suggestion": "如实告诉用户失败的原因，不要编造结果"}
    if is_empty(result.data):
        return {"action": "retry_with_broader_query", "suggestion": f"放宽条件重新查询（原问题：{user_query}）；仍为空就如实告诉用户"}
    if result.truncated:
        return {"action": "summarize_and_present", "data": result.data,
                "suggestion": "结果已按预算截断：基于这份摘要回答，说明只显示了一部分"}
    return {"action": "present_directly", "data": result.data, "suggestion": f"直接依据结果回答：{user_query}"}


PIECE = evaluate_tool_result
