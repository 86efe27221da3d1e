"""Backs off with full jitter but never reads the server's Retry-After.

fails: retry_after_honoured | Retry-After 5 秒
"""
import inspect

from toolkit import classify_error, get_clock


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    start = clock.now()
    for attempt in range(1, max_retries + 2):
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable or attempt > max_retries:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        wait = clock.random.uniform(0, min(30, 2 ** (attempt - 1)))
        if clock.now() - start + wait > deadline:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        await clock.sleep(wait)
