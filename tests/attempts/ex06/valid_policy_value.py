"""Builds the policy as a value: a write without a key gets RetryPolicy(max_retries=0), the rest the default."""
from toolkit import RetryPolicy, call_tool_with_retry

WRITE_TOOLS = {"create_order", "place_order", "transfer_money", "send_email"}


def needs_care(tool_fn, kwargs):
    key = kwargs.get("idempotency_key")
    return tool_fn.__name__ in WRITE_TOOLS and not (isinstance(key, str) and key.strip())


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    if needs_care(tool_fn, kwargs):
        result, error = await call_tool_with_retry(tool_fn, *args, policy=RetryPolicy(max_retries=0), **kwargs)
        if error is not None:
            error = f"{error}。这是写操作，没有 idempotency_key（幂等键）：不自动重试，请先确认订单是否已经创建"
        return result, error
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
