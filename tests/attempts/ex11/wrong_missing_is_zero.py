"""Reads a missing argument as 0 (`.get(argument, 0)`): a refund without an amount is approved.

fails: bad_value_denied | 模型没给 amount
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine:
        return f"没有 {pending.tool} 的规则，不自动批准"
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    for argument, limit in mine:
        value = pending.arguments.get(argument, 0)
        size = len(value) if isinstance(value, list) else value
        try:
            over = size > limit
        except TypeError:
            return f"{argument} 的值 {value!r} 没法和上限 {limit} 比较"
        if over:
            return f"{argument} 是 {size}，超过上限 {limit}"
    return True
