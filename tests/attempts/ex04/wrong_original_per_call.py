"""The original course's format_tool_message for each call: Chat Completions only, fmt ignored, the status from
`error is None`, no error_type, results taken in the order they finished.

fails: matched_by_id | 不能按完成的顺序
fails: responses_call_id | function_call_output
fails: anthropic_one_message | 同一条 user 消息
fails: missing_is_error | 应有 3 条回复
fails: errors_marked | 它的结果 status 是 partial
fails: edge_arguments | 应抛出 ValueError
fails: random_turns | 回复
"""
import json


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    replies = []
    for raw, result in zip(tool_calls, results.values()):
        replies.append({"role": "tool", "tool_call_id": raw["id"], "name": result.name,
                        "content": json.dumps({"status": "success" if result.error is None else "error",
                                               "result": result.data, "error": result.error,
                                               "execution_time_ms": result.duration_ms}, ensure_ascii=False)})
    return replies
