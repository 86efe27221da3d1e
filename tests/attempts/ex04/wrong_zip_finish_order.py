"""Pairs the calls with the results in the order the results finished: the ids are right, the data is not.

fails: matched_by_id | 不能按完成的顺序
fails: responses_call_id | 不能按完成的顺序
fails: anthropic_one_message | 不能按完成的顺序
fails: missing_is_error | 应有 3 条回复
fails: random_turns | 不能按完成的顺序
"""
from toolkit import format_tool_message, parse_tool_call


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in ("openai_chat", "openai_responses", "anthropic"):
        raise ValueError(fmt)
    replies = [format_tool_message(parse_tool_call(raw, fmt).name, parse_tool_call(raw, fmt).id, result, fmt=fmt)
               for raw, result in zip(tool_calls, results.values())]
    if fmt == "anthropic":
        return [{"role": "user", "content": replies}] if replies else []
    return replies
