"""Keeps the seen calls in a class attribute: every RepeatGuard() shares one set (and one count), so
calls made by earlier guards are refused by later ones.

fails: guards_independent | 各记各的
fails: different_arguments_run | 实际执行 2 次
fails: transient_failure_may_repeat | 不应拦下
fails: refused_count | 得到 4
"""
from toolkit import call_tool_with_retry


class RepeatGuard:
    seen = set()
    refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (tool_fn.__name__, repr(args), repr(sorted(kwargs.items())))
        if key in self.seen:
            self.refused += 1
            return None, "重复调用：结果不会变，请换参数"
        outcome = await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
        if outcome.error is None or not outcome.info.retryable:
            self.seen.add(key)
        return outcome.result, outcome.error
