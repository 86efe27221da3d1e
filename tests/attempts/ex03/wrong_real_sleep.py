"""Waits with asyncio.sleep instead of the simulated clock: correct results, but every wait is real.

fails: retry_after_honoured | 用了真实的 sleep
fails: deadline_respected | 用了真实的 sleep
fails: waits_on_clock | 用了真实的 sleep
fails: jitter | 用了真实的 sleep
"""
import asyncio
import inspect
import random

from toolkit import classify_error


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    for attempt in range(max_retries + 1):
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
            if not info.retryable or attempt == max_retries:
                return None, f"{info.message}（共尝试 {attempt + 1} 次）"
        await asyncio.sleep(max(random.uniform(0, min(30, 2 ** attempt)), info.retry_after or 0))
