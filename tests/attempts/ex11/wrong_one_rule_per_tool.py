"""Turns the table into {tool: (argument, limit)}: issue_coupon's second rule overwrites its first, so a coupon
of 80 (over the amount limit of 50) is approved.

fails: every_rule | 每条规则都要满足
"""


def approve_by_rules(pending, rules):
    table = {tool: (argument, limit) for tool, argument, limit in rules}
    if pending.tool not in table:
        return f"规则表里没有 {pending.tool}"
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象"
    argument, limit = table[pending.tool]
    value = pending.arguments.get(argument)
    size = len(value) if isinstance(value, list) else value
    if not isinstance(size, (int, float)):
        return f"{argument} 的值 {value!r} 没法和上限 {limit} 比较"
    if size > limit:
        return f"{argument} 是 {size}，超过上限 {limit}"
    return True
