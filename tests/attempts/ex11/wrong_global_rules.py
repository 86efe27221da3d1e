"""Reads the notebook's RULES instead of the `rules` it is given: right on the course's table, wrong on any other.

fails: rules_from_argument | 应批准
"""
RULES = [("send_notice", "order_ids", 1), ("refund_order", "amount", 500),
         ("issue_coupon", "amount", 50), ("issue_coupon", "count", 100)]


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in RULES if tool == pending.tool]
    if not mine:
        return f"没有 {pending.tool} 的规则，不自动批准"
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    for argument, limit in mine:
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)):
            return f"{argument} 的值 {value!r} 没法和上限 {limit} 比较"
        if size > limit:
            return f"{argument} 是 {size}，超过上限 {limit}"
    return True
