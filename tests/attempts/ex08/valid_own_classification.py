"""Runs the tool itself and classifies the failure with classify_error, without call_tool_with_retry."""
import inspect
import json

from toolkit import classify_error


class RepeatGuard:
    def __init__(self):
        self.seen = set()
        self.refused = 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = json.dumps([tool_fn.__name__, args, kwargs], sort_keys=True, ensure_ascii=False, default=repr)
        if key in self.seen:
            self.refused += 1
            return None, "重复调用：这个工具已经用同样的参数调用过，结果不会改变"
        try:
            value = tool_fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            info = classify_error(exc)
            if not info.retryable:
                self.seen.add(key)
            return None, info.message
        self.seen.add(key)
        return value, None
