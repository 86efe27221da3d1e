"""Calls the async tool without await: the coroutine is returned as if it were the result.

fails: success_returns_pair | 没有 await
fails: transient_errors_retried | 没有 await
fails: permission_error_not_retried | 没有 await
fails: max_retries_counts_retries | 没有 await
fails: max_retries_zero | 没有 await
fails: retry_after_honoured | 没有 await
fails: deadline_respected | 没有 await
fails: waits_on_clock | 没有 await
fails: jitter | 没有 await
fails: arguments_passed | 没有 await
"""
from toolkit import classify_error, get_clock


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    for attempt in range(max_retries + 1):
        try:
            return tool_fn(*args, **kwargs), None
        except Exception as exc:
            info = classify_error(exc)
            if not info.retryable or attempt == max_retries:
                return None, f"{info.message}（共尝试 {attempt + 1} 次）"
        await clock.sleep(clock.random.uniform(0, min(30, 2 ** attempt)))
