"""A for loop, with the bucket's two rules as small helpers."""
import inspect

from toolkit import classify_error, get_clock

RETRY_COST = 5


def take(budget):
    """额度够一次重试就扣掉并返回 True。"""
    if budget["tokens"] < RETRY_COST:
        return False
    budget["tokens"] -= RETRY_COST
    return True


def give_back(budget):
    budget["tokens"] = min(budget["capacity"], budget["tokens"] + 1)


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    clock = get_clock()
    for n in range(max_retries + 1):
        try:
            value = tool_fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            info = classify_error(exc)
            if not info.retryable:
                return None, f"不可重试：{info.message}"
            if n == max_retries:
                return None, f"{info.message}，共尝试 {n + 1} 次"
            if not take(budget):
                return None, f"{info.message}，共尝试 {n + 1} 次，重试额度不足"
            backoff = clock.random.uniform(0, min(30, 2 ** n))
            await clock.sleep(max(backoff, info.retry_after or 0))
        else:
            give_back(budget)
            return value, None
