"""Jitter drawn from the random module instead of the simulated clock's random, which the task names: the waits
still differ from client to client, but the same seed no longer gives the same waits (the chapter's seeded demo
is not reproducible).

fails: jitter | get_clock().random
"""
import inspect
import random

from toolkit import classify_error, get_clock

RETRY_COST = 5


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
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
        wait = random.uniform(0, min(30.0, 2 ** (attempt - 1)))
        await clock.sleep(max(wait, info.retry_after or 0.0))
