"""Retries every exception, PermissionError and ValueError included (what the original executor did).

fails: permission_error_not_retried | 只调用 1 次
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
            if attempt > max_retries:
                return None, f"{info.message}（共尝试 {attempt} 次）"
        wait = max(clock.random.uniform(0, min(30, 2 ** (attempt - 1))), info.retry_after or 0)
        if clock.now() - start + wait > deadline:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        await clock.sleep(wait)
