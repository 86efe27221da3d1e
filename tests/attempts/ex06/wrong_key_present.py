"""Asks whether the key is in kwargs, not whether it has a value: idempotency_key="" counts as a key.

fails: blank_key_is_no_key | 等于没有幂等键
"""
import inspect

from toolkit import call_tool_with_retry, classify_error

WRITE_TOOLS = {"create_order", "place_order", "transfer_money", "send_email"}


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    if tool_fn.__name__ in WRITE_TOOLS and "idempotency_key" not in kwargs:
        try:
            result = tool_fn(*args, **kwargs)
            return (await result if inspect.isawaitable(result) else result), None
        except Exception as exc:
            return None, f"{classify_error(exc).message}：写操作没有 idempotency_key，没有重试"
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
