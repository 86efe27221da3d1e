"""Reads "不超过上限" as "below the limit": a refund of exactly 500 and a notice of one order (the limits) are denied.

fails: within_limits | 等于上限也算
fails: list_counts_items | 等于上限也算
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine:
        return f"没有 {pending.tool} 的规则"
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    for argument, limit in mine:
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)):
            return f"{argument} 的值 {value!r} 没法比较"
        if size >= limit:
            return f"{argument} 是 {size}，上限 {limit}"
    return True
