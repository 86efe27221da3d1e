"""Hands the whole policy to the toolkit: call_tool_with_retry with a RetryPolicy that has the deadline."""
from toolkit import RetryPolicy, call_tool_with_retry


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    policy = RetryPolicy(max_retries=max_retries, deadline=deadline)
    result, error = await call_tool_with_retry(tool_fn, *args, policy=policy, **kwargs)
    return result, error
