"""The original course's executor loop: every exception retried, writes and PermissionError included.

fails: write_without_key_runs_once | 不能重试
fails: write_without_key_says_why | 为什么没有重试
fails: blank_key_is_no_key | 等于没有幂等键
fails: permission_error_not_retried | PermissionError 不可重试
fails: max_retries_respected | max_retries=2
"""
from toolkit import get_clock


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    clock = get_clock()
    for attempt in range(max_retries):
        try:
            return await tool_fn(*args, **kwargs), None
        except Exception as e:
            if attempt == max_retries - 1:
                return None, str(e)
            await clock.sleep(2 ** attempt)
