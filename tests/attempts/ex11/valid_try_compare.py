"""Asks forgiveness: compares inside try and turns what cannot be compared into a denial; numbers by numbers.Real."""
import numbers


def approve_by_rules(pending, rules):
    mine = [rule for rule in rules if rule[0] == pending.tool]
    if len(mine) == 0:
        return "规则表中没有 " + pending.tool + "，拒绝自动执行"
    for _, argument, limit in mine:
        try:
            value = pending.arguments[argument]
            size = len(value) if type(value) is list else value
            if isinstance(size, bool) or not isinstance(size, numbers.Real):
                raise TypeError(argument)
            over = size > limit
        except (KeyError, TypeError, AttributeError):
            return "无法按规则（" + argument + " ≤ " + str(limit) + "）审批：参数缺失或不是数字"
        if over:
            return "违反规则 " + argument + " ≤ " + str(limit) + "（实际为 " + str(size) + "）"
    return True
