"""Everything handed to the toolkit's evaluate_tool_result, which chapter 05 shows with both new arguments: a failed
step keeps its action, but the suggestion never says which step of the task is left undone.

fails: failure_says_what_is_left | 还没做的那一步
"""
from toolkit import evaluate_tool_result


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    return evaluate_tool_result(result, user_query, next_step=next_step, broadened_from=broadened_from)
