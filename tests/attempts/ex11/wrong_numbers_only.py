"""Compares numbers only: a list (order_ids) is "not a number" and every notice is denied, the one-order notice too.

fails: list_counts_items | 应批准
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine:
        return f"没有 {pending.tool} 的规则，不自动批准"
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    for argument, limit in mine:
        value = pending.arguments.get(argument)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{argument} 不是数字（{value!r}），没法和上限 {limit} 比较"
        if value > limit:
            return f"{argument} 是 {value}，超过上限 {limit}"
    return True
