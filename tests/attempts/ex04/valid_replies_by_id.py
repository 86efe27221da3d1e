"""Formats every result first, keyed by id, then walks the calls in order and fills the gaps with an error."""
from toolkit import ToolResult, format_tool_message, parse_tool_call


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in ("openai_chat", "openai_responses", "anthropic"):
        raise ValueError("fmt 不对")
    calls = [parse_tool_call(raw, fmt) for raw in tool_calls]
    done = {c.id: format_tool_message(c.name, c.id, results[c.id], fmt=fmt) for c in calls if c.id in results}
    lost = ToolResult("unknown", None, "调用没有结果", error_type="fatal")
    blocks = [done.get(c.id) or format_tool_message(c.name, c.id, lost, fmt=fmt) for c in calls]
    if not blocks:
        return []
    return [{"role": "user", "content": blocks}] if fmt == "anthropic" else blocks
