"""Remembers every call, even one that only timed out: a transient failure can never be tried again.

fails: transient_failure_may_repeat | 不应拦下
"""
from toolkit import call_tool_with_retry


class RepeatGuard:
    def __init__(self):
        self.seen = set()
        self.refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (tool_fn.__name__, repr(args), repr(sorted(kwargs.items())))
        if key in self.seen:
            self.refused += 1
            return None, "重复调用：这个调用已经做过了，结果不会变"
        self.seen.add(key)
        result, error = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        return result, error
