"""A frozenset of the keyword arguments and a counter dict: another way to key and count."""
from toolkit import call_tool_with_retry


class RepeatGuard:
    def __init__(self):
        self.seen = set()
        self.refused = 0

    @staticmethod
    def key(tool_fn, args, kwargs):
        return tool_fn.__name__, tuple(map(repr, args)), frozenset((k, repr(v)) for k, v in kwargs.items())

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = self.key(tool_fn, args, kwargs)
        if key in self.seen:
            self.refused += 1
            return None, f"重复调用 {tool_fn.__name__}：同样的参数已经得到过结论，再调也不会变；请换参数或直接回答"
        outcome = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        settled = outcome.error is None or not outcome.info.retryable
        if settled:
            self.seen.add(key)
        return outcome.result, outcome.error
