"""Gives every Anthropic tool_result block its own user message, as Chat Completions gives every result its own
tool message.

fails: anthropic_one_message | 同一条 user 消息
fails: missing_is_error | 同一条 user 消息
fails: random_turns | 同一条 user 消息
"""
from toolkit import ToolResult, format_tool_message, parse_tool_call


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in ("openai_chat", "openai_responses", "anthropic"):
        raise ValueError(fmt)
    replies = []
    for raw in tool_calls:
        call = parse_tool_call(raw, fmt)
        result = results.get(call.id) or ToolResult(call.name, None, "没有拿到结果", error_type="fatal")
        message = format_tool_message(call.name, call.id, result, fmt=fmt)
        replies.append({"role": "user", "content": [message]} if fmt == "anthropic" else message)
    return replies
