"""A plain def that returns a coroutine only when the tool is async: the checker awaits what it gets either way.
The refund is written with an if instead of min()."""
import inspect

from toolkit import classify_error, get_clock


def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    async def run():
        clock = get_clock()
        tries = 0
        while True:
            tries += 1
            try:
                out = tool_fn(*args, **kwargs)
                out = await out if inspect.isawaitable(out) else out
            except Exception as exc:
                info = classify_error(exc)
            else:
                if budget["tokens"] < budget["capacity"]:
                    budget["tokens"] += 1
                return out, None
            stop = (not info.retryable and "不可重试") or (tries > max_retries and "次数用完") \
                or (budget["tokens"] < 5 and "重试额度已用完")
            if stop:
                return None, f"{info.message}（{stop}，共尝试 {tries} 次）"
            budget["tokens"] -= 5
            await clock.sleep(max(clock.random.uniform(0, min(30, 2 ** (tries - 1))), info.retry_after or 0))
    return run()
