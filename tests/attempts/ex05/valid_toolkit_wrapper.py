"""A valid answer that hands both new arguments to the toolkit's evaluate_tool_result (which has the two branches)."""
from toolkit import evaluate_tool_result


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    return evaluate_tool_result(result, user_query, next_step=next_step, broadened_from=broadened_from)
