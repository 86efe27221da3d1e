"""Reads max_retries as the total number of attempts (range(max_retries)), like the original course.

fails: max_retries_counts_retries | max_retries=3 表示第一次之后最多再试 3 次
fails: max_retries_zero | max_retries=0
"""
import inspect

from toolkit import classify_error, get_clock


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    start = clock.now()
    error = "没有尝试"
    for attempt in range(1, max_retries + 1):
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
            error = f"{info.message}（共尝试 {attempt} 次）"
            if not info.retryable:
                return None, error
        wait = max(clock.random.uniform(0, min(30, 2 ** (attempt - 1))), info.retry_after or 0)
        if clock.now() - start + wait > deadline:
            return None, error
        await clock.sleep(wait)
    return None, error
