"""Denies with a reason that names no rule: the model can only say "超出限额", not which one nor by how much.

fails: reason_names_rule | 缺了
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine:
        return "这个写操作不在规则表里"
    if not isinstance(pending.arguments, dict):
        return "参数看不懂"
    for argument, limit in mine:
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)) or size > limit:
            return "超出限额，需要人工审批"
    return True
