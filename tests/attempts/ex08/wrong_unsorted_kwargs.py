"""Keys a call on its keyword arguments in the order given: origin/destination swapped looks like a new call.

fails: keyword_order_irrelevant | 关键字参数顺序不同仍是同一个调用
"""
from toolkit import call_tool_with_retry


class RepeatGuard:
    def __init__(self):
        self.seen = set()
        self.refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (tool_fn.__name__, repr(args), repr(list(kwargs.items())))
        if key in self.seen:
            self.refused += 1
            return None, "重复调用：同样的参数已经调用过，结果不会变"
        outcome = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        if outcome[1] is None or not outcome.info.retryable:
            self.seen.add(key)
        return tuple(outcome)
