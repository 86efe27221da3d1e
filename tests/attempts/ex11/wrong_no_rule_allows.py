"""Allows what no rule speaks of: cancel_order, which nobody wrote a rule for, goes out unasked.

fails: unknown_tool_denied | 却批准了
fails: rules_from_argument | 却批准了
"""


def approve_by_rules(pending, rules):
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    for tool, argument, limit in rules:
        if tool != pending.tool:
            continue
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)):
            return f"{argument} 的值 {value!r} 没法和上限 {limit} 比较"
        if size > limit:
            return f"{argument} 是 {size}，超过上限 {limit}"
    return True
