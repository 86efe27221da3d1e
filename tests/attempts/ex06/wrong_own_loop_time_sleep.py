"""Writes its own retry loop for reads and waits with time.sleep: the waits are real, not on the clock.

fails: waits_on_clock | 用了真实的 sleep
"""
import inspect
import time

from toolkit import classify_error

WRITE_TOOLS = {"create_order", "place_order", "transfer_money", "send_email"}


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    key = str(kwargs.get("idempotency_key") or "").strip()
    tries = 1 if tool_fn.__name__ in WRITE_TOOLS and not key else max_retries + 1
    for attempt in range(1, tries + 1):
        try:
            result = tool_fn(*args, **kwargs)
            return (await result if inspect.isawaitable(result) else result), None
        except Exception as exc:
            info = classify_error(exc)
            if tries == 1:
                return None, f"{info.message}：写操作没有 idempotency_key（幂等键），第一次可能已经生效，不重试"
            if not info.retryable or attempt == tries:
                return None, f"{info.message}（共尝试 {attempt} 次）"
            time.sleep(2 ** (attempt - 1))
