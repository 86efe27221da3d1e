"""Trusts the model's arguments to be a dict of numbers: a value it cannot compare (text, None, arguments that are
not JSON) raises instead of denying. run_agent would deny such a call anyway, but with the error as the reason.

fails: bad_value_denied | 异常
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine:
        return f"没有 {pending.tool} 的规则，不自动批准"
    for argument, limit in mine:
        value = pending.arguments[argument]
        size = len(value) if isinstance(value, list) else value
        if size > limit:
            return f"{argument} 是 {size}，超过上限 {limit}"
    return True
