"""Decorrelated jitter (each wait drawn between the base and three times the last one, capped), from the clock's
random, with the budget kept in small helper functions."""
import inspect

from toolkit import classify_error, get_clock


def can_retry(budget, cost=5):
    if budget["tokens"] < cost:
        return False
    budget["tokens"] -= cost
    return True


def refund(budget):
    budget["tokens"] = min(budget["capacity"], budget["tokens"] + 1)


async def call_once(tool_fn, args, kwargs):
    value = tool_fn(*args, **kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    clock = get_clock()
    wait, tries = 1.0, 0
    while True:
        tries += 1
        try:
            result = await call_once(tool_fn, args, kwargs)
        except Exception as exc:
            info = classify_error(exc)
        else:
            refund(budget)
            return result, None
        if not info.retryable:
            return None, f"{info.message}：这种错误重试也没用"
        if tries > max_retries:
            return None, f"{info.message}：共尝试 {tries} 次"
        if not can_retry(budget):
            return None, f"{info.message}：重试额度已用完（共尝试 {tries} 次）"
        wait = min(30.0, clock.random.uniform(1.0, wait * 3))
        await clock.sleep(max(wait, info.retry_after or 0.0))
