"""The do-nothing answer: every write is approved, as approve=True does. It earns the one point of a write within
its rules.

fails: over_limit_denied | 却批准了
fails: reason_names_rule | 却批准了
fails: list_counts_items | 却批准了
fails: every_rule | 却批准了
fails: unknown_tool_denied | 却批准了
fails: bad_value_denied | 却批准了
fails: rules_from_argument | 却批准了
"""


def approve_by_rules(pending, rules):
    return True
