"""The chapter's call_tool_with_retry renamed, the budget accepted and ignored: retries are still per call.

fails: retry_costs_tokens | 一个令牌都没花
fails: empty_budget_stops_retrying | 应只调用 1 次
fails: budget_shared_across_calls | 额度要跨调用共享
fails: refund_capped | 每次成功还回 1 个令牌
"""
import inspect

from toolkit import classify_error, get_clock


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    start = clock.now()
    for attempt in range(max_retries + 1):
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable:
            return None, info.message
        if attempt == max_retries:
            break
        wait = clock.random.uniform(0, min(30, 2 ** attempt))
        wait = max(wait, info.retry_after or 0)
        if clock.now() - start + wait > deadline:
            return None, f"{info.message}；共尝试 {attempt + 1} 次，剩余时间不够再试一次"
        await clock.sleep(wait)
    return None, f"{info.message}；共尝试 {max_retries + 1} 次"
