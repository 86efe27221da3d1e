"""Equal jitter (half the backoff fixed, half drawn) from the clock's random, in a for loop over the attempts."""
import inspect

from toolkit import classify_error, get_clock

COST = 5
CAP = 30.0


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    clock = get_clock()
    for attempt in range(max_retries + 1):
        try:
            value = tool_fn(*args, **kwargs)
            result = await value if inspect.isawaitable(value) else value
        except Exception as exc:
            info = classify_error(exc)
        else:
            budget["tokens"] = min(budget["tokens"] + 1, budget["capacity"])
            return result, None
        if not info.retryable:
            return None, f"不可重试：{info.message}"
        if attempt == max_retries:
            return None, f"共尝试 {attempt + 1} 次仍失败：{info.message}"
        if budget["tokens"] < COST:
            return None, f"重试额度已用完（共尝试 {attempt + 1} 次）：{info.message}"
        budget["tokens"] -= COST
        backoff = min(CAP, 2.0 ** attempt)
        wait = backoff / 2 + clock.random.uniform(0, backoff / 2)
        await clock.sleep(max(wait, info.retry_after or 0))
