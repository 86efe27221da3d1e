"""Returns True as soon as one rule holds (an `else: return True` inside the loop): issue_coupon's count is never
looked at when its amount is within.

fails: every_rule | 每条规则都要满足
"""


def approve_by_rules(pending, rules):
    if not isinstance(pending.arguments, dict):
        return "参数不是 JSON 对象，不自动批准"
    for tool, argument, limit in rules:
        if tool != pending.tool:
            continue
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)):
            return f"{argument} 的值 {value!r} 没法和上限 {limit} 比较"
        if size > limit:
            return f"{tool} 的 {argument} 是 {size}，超过上限 {limit}"
        else:
            return True
    return f"规则表里没有 {pending.tool}"
