"""Groups the table by tool first (a dict of lists, so no rule is lost) and names every broken rule at once."""
from collections import defaultdict


def measure(value):
    """The number a rule compares: a list's length, a number itself, None for anything else."""
    if isinstance(value, list):
        return len(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def approve_by_rules(pending, rules):
    by_tool = defaultdict(list)
    for tool, argument, limit in rules:
        by_tool[tool].append((argument, limit))
    if pending.tool not in by_tool:
        return f"{pending.tool} 没有审批规则：不自动批准，请人工处理"
    arguments = pending.arguments if isinstance(pending.arguments, dict) else {}
    problems = []
    for argument, limit in by_tool[pending.tool]:
        size = measure(arguments.get(argument))
        if size is None:
            problems.append(f"{argument} 缺失或不是数字/列表（上限 {limit}）")
        elif size > limit:
            problems.append(f"{argument}={size} 超过上限 {limit}")
    return "；".join(problems) + "。需要人工审批" if problems else True
