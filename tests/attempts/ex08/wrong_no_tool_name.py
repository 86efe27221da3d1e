"""Keys a call on its arguments only: get_weather("上海") then search_flights("上海") is called a repeat.

fails: different_tools_run | 按工具名 + 参数判断
"""
from toolkit import call_tool_with_retry


class RepeatGuard:
    def __init__(self):
        self.seen = set()
        self.refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (repr(args), repr(sorted(kwargs.items())))
        if key in self.seen:
            self.refused += 1
            return None, "重复调用：结果不会变"
        outcome = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        if outcome[1] is None or not outcome.info.retryable:
            self.seen.add(key)
        return outcome[0], outcome[1]
