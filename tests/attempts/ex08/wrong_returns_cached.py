"""Answers a repeat with the cached result instead of refusing it: the model is never told to stop.

fails: repeat_refused_without_running | 重复的调用应返回 (None, 错误说明)
fails: repeat_message_says_why | 重复调用
fails: refused_count | guard.refused
"""
from toolkit import call_tool_with_retry


class RepeatGuard:
    def __init__(self):
        self.seen = {}
        self.refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (tool_fn.__name__, repr(args), repr(sorted(kwargs.items())))
        if key in self.seen:
            return self.seen[key]
        outcome = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        if outcome[1] is None or not outcome.info.retryable:
            self.seen[key] = (outcome[0], outcome[1])
        return outcome[0], outcome[1]
