"""Finds the first broken rule with next() over a generator; a rule is broken when its value is missing, cannot
be compared or is over the limit."""


def broken(arguments, argument, limit):
    value = arguments.get(argument) if isinstance(arguments, dict) else None
    size = len(value) if isinstance(value, (list, tuple)) else value
    return type(size) not in (int, float) or size > limit


def approve_by_rules(pending, rules):
    mine = [(a, l) for t, a, l in rules if t == pending.tool]
    if not mine:
        return f"拒绝：没有适用于 {pending.tool} 的规则"
    rule = next(((a, l) for a, l in mine if broken(pending.arguments, a, l)), None)
    if rule is None:
        return True
    argument, limit = rule
    value = pending.arguments.get(argument) if isinstance(pending.arguments, dict) else pending.arguments
    return f"拒绝：规则要求 {argument} 不超过 {limit}，这次是 {value!r}"
