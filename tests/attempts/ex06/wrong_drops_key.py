"""Takes idempotency_key out of kwargs to decide, and forgets to pass it on to the tool.

fails: write_with_key_retried | 原样传给工具
"""
import inspect

from toolkit import call_tool_with_retry, classify_error

WRITE_TOOLS = {"create_order", "place_order", "transfer_money", "send_email"}


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    key = str(kwargs.pop("idempotency_key", "") or "").strip()
    if tool_fn.__name__ in WRITE_TOOLS and not key:
        try:
            result = tool_fn(*args, **kwargs)
            return (await result if inspect.isawaitable(result) else result), None
        except Exception as exc:
            return None, f"{classify_error(exc).message}：写操作没有 idempotency_key（幂等键），没有重试"
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
