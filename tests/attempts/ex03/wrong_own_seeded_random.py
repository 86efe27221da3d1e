"""Jitter from a random.Random of its own, seeded once when the module loads: reproducible in the student's own
run, but the clock's seed changes nothing, and each call goes on where the last one stopped.

fails: jitter | get_clock().random
"""
import inspect
import random

from toolkit import classify_error, get_clock

RETRY_COST = 5
JITTER = random.Random(42)


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    clock = get_clock()
    for attempt in range(1, max_retries + 2):
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
        await clock.sleep(max(JITTER.uniform(0, min(30.0, 2 ** (attempt - 1))), info.retry_after or 0.0))
