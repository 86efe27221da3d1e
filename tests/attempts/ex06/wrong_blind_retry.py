"""Hands every call to call_tool_with_retry: a write that timed out is sent again (two orders).

fails: write_without_key_runs_once | 不能重试
fails: write_without_key_says_why | 为什么没有重试
fails: blank_key_is_no_key | 等于没有幂等键
"""
from toolkit import call_tool_with_retry


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)
