"""Copies the budget at the start of each call: every call sees a full bucket, so a dead
dependency still gets 400 requests for 100 calls.

fails: retry_costs_tokens | 一个令牌都没花
fails: empty_budget_stops_retrying | 剩 10 个
fails: budget_shared_across_calls | 额度要跨调用共享
fails: refund_capped | 每次成功还回 1 个令牌
"""
import inspect

from toolkit import classify_error, get_clock

RETRY_COST = 5


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    budget = dict(budget)  # 每次调用一份自己的额度
    clock = get_clock()
    attempt = 0
    while True:
        attempt += 1
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            info = classify_error(exc)
        else:
            budget["tokens"] = min(budget["capacity"], budget["tokens"] + 1)
            return result, None
        if not info.retryable:
            return None, f"{info.message}（不可重试）"
        if attempt > max_retries:
            return None, f"{info.message}（共尝试 {attempt} 次）"
        if budget["tokens"] < RETRY_COST:
            return None, f"{info.message}（共尝试 {attempt} 次，重试额度已用完）"
        budget["tokens"] -= RETRY_COST
        wait = clock.random.uniform(0, min(30.0, 2 ** (attempt - 1)))
        await clock.sleep(max(wait, info.retry_after or 0.0))
