"""Reads each call's `id` itself: right for Chat Completions and Anthropic, but a Responses call's `id` is the
output item's (fc_...), and the reply must answer its call_id.

fails: responses_call_id | 应是 'call_
fails: missing_is_error | 应是 'call_
fails: random_turns | 应是 'call_
"""
from toolkit import ToolResult, format_tool_message


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in ("openai_chat", "openai_responses", "anthropic"):
        raise ValueError(fmt)
    replies = []
    for raw in tool_calls:
        name = raw.get("name") or raw.get("function", {}).get("name")
        result = results.get(raw["id"]) or ToolResult(name, None, "没有拿到结果", error_type="fatal")
        replies.append(format_tool_message(name, raw["id"], result, fmt=fmt))
    if fmt == "anthropic":
        return [{"role": "user", "content": replies}] if replies else []
    return replies
