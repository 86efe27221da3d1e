"""A valid answer that builds on the toolkit: evaluate_tool_result decides, and a failure with a step left gets the
step added to its suggestion (what the toolkit does not say)."""
from toolkit import evaluate_tool_result


def decide_next_step(result, user_query, next_step=None, broadened_from=None):
    decision = evaluate_tool_result(result, user_query, next_step=next_step, broadened_from=broadened_from)
    if decision["action"] in ("retry", "report_error") and next_step:
        decision["suggestion"] += f"。注意：任务里的「{next_step}」因此还没有做，回答时告诉用户"
    return decision
