"""Builds the pair but forgets `return` on success: the function returns None there.

fails: success_returns_pair | None（是不是忘了 return？）
fails: transient_errors_retried | None（是不是忘了 return？）
fails: retry_after_honoured | None（是不是忘了 return？）
fails: waits_on_clock | None（是不是忘了 return？）
fails: jitter | None（是不是忘了 return？）
fails: sync_tool_works | None（是不是忘了 return？）
fails: arguments_passed | None（是不是忘了 return？）
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
            outcome = (result, None)
            break
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable or attempt > max_retries:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        wait = max(clock.random.uniform(0, min(30, 2 ** (attempt - 1))), info.retry_after or 0)
        if clock.now() - start + wait > deadline:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        await clock.sleep(wait)
