"""A for loop over the attempts with the wait computed in a helper: another shape of the same policy."""
import inspect

from toolkit import classify_error, get_clock


def backoff(clock, retry_number, retry_after):
    return max(clock.random.uniform(0, min(30.0, 2.0 ** retry_number)), retry_after or 0.0)


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    began = clock.now()
    for n in range(max_retries + 1):
        try:
            value = tool_fn(*args, **kwargs)
            return (await value if inspect.isawaitable(value) else value), None
        except Exception as exc:
            info = classify_error(exc)
        tried = n + 1
        if not info.retryable:
            return None, f"不可重试：{info.message}（共尝试 {tried} 次）"
        if n == max_retries:
            break
        wait = backoff(clock, n, info.retry_after)
        if clock.now() + wait - began > deadline:
            return None, f"{info.message}：再等 {wait:.1f} 秒就超过总时限（共尝试 {tried} 次）"
        await clock.sleep(wait)
    return None, f"{info.message}（共尝试 {max_retries + 1} 次，放弃）"
