"""Hands the loop to the toolkit: call_tool_with_retry with a RetryBudget made from the dict (a timeout
costs 5 here too) and the tokens written back afterwards."""
from toolkit import RetryBudget, call_tool_with_retry


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    bucket = RetryBudget(capacity=budget["capacity"], retry_cost=5, timeout_cost=5, tokens=budget["tokens"])
    try:
        result, error = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, budget=bucket, **kwargs)
    finally:
        budget["tokens"] = bucket.tokens
    return result, error
