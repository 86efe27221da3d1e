"""A for loop that forgets the last `return`: when the retries run out the function falls off its end
and returns None instead of (None, error).

fails: max_retries_counts_retries | 忘了 return
fails: budget_shared_across_calls | 忘了 return
"""
import inspect

from toolkit import classify_error, get_clock


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    clock = get_clock()
    for attempt in range(max_retries + 1):
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            budget["tokens"] = min(budget["capacity"], budget["tokens"] + 1)
            return result, None
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable:
            return None, info.message
        if budget["tokens"] < 5:
            return None, f"{info.message}（重试额度已用完，共尝试 {attempt + 1} 次）"
        if attempt < max_retries:
            budget["tokens"] -= 5
            await clock.sleep(max(clock.random.uniform(0, min(30, 2 ** attempt)), info.retry_after or 0))
