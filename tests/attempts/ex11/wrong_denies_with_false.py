"""Denies with False: the write is stopped, but the model reads only "审批人拒绝" and cannot tell the user why.

fails: over_limit_denied | 理由
fails: reason_names_rule | 理由
fails: list_counts_items | 理由
fails: every_rule | 理由
fails: unknown_tool_denied | 理由
fails: bad_value_denied | 理由
fails: rules_from_argument | 理由
"""


def approve_by_rules(pending, rules):
    mine = [(argument, limit) for tool, argument, limit in rules if tool == pending.tool]
    if not mine or not isinstance(pending.arguments, dict):
        return False
    for argument, limit in mine:
        value = pending.arguments.get(argument)
        size = len(value) if isinstance(value, list) else value
        if not isinstance(size, (int, float)) or size > limit:
            return False
    return True
