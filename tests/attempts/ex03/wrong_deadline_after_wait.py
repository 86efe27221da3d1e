"""Checks the deadline only after waiting, so the last attempt starts past it.

fails: deadline_respected | deadline=10 秒
"""
import inspect

from toolkit import classify_error, get_clock


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    start = clock.now()
    attempt = 0
    while True:
        attempt += 1
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable or attempt > max_retries:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        await clock.sleep(max(clock.random.uniform(0, min(30, 2 ** (attempt - 1))), info.retry_after or 0))
        if clock.now() - start > deadline:
            return None, f"{info.message}（共尝试 {attempt} 次，超过总时限）"
