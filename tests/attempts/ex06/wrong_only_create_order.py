"""Checks the one write tool of the examples by name (== "create_order") instead of WRITE_TOOLS: a transfer or an
email that timed out is sent again.

fails: write_without_key_runs_once | 不只 create_order
fails: write_without_key_says_why | 为什么没有重试
fails: blank_key_is_no_key | 等于没有幂等键
"""
import inspect

from toolkit import classify_error, get_clock

WRITE_TOOLS = {"create_order", "place_order", "transfer_money", "send_email"}


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    clock = get_clock()
    write_once = tool_fn.__name__ == "create_order" and not str(kwargs.get("idempotency_key") or "").strip()
    attempts = 1 if write_once else max_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            value = tool_fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
            return value, None
        except Exception as exc:
            info = classify_error(exc)
        if write_once:
            return None, f"{info.message}（写操作缺少 idempotency_key，可能已经生效，所以没有重试）"
        if not info.retryable or attempt == attempts:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        await clock.sleep(max(clock.random.uniform(0, min(30, 2 ** (attempt - 1))), info.retry_after or 0))
