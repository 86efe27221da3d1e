"""Answers only the calls that have a result: the call whose result was lost gets no reply, and the API refuses
the next request.

fails: missing_is_error | 应有 3 条回复
fails: random_turns | 条回复
"""
from toolkit import format_tool_message, parse_tool_call


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in ("openai_chat", "openai_responses", "anthropic"):
        raise ValueError(fmt)
    replies = []
    for raw in tool_calls:
        call = parse_tool_call(raw, fmt)
        if call.id in results:
            replies.append(format_tool_message(call.name, call.id, results[call.id], fmt=fmt))
    if fmt == "anthropic":
        return [{"role": "user", "content": replies}] if replies else []
    return replies
