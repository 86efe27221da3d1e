"""Does nothing about retries: calls the tool once, whatever it is, and says "写操作 idempotency_key" in every
error. It used to pass every "do not retry" check (5/9); each of those now also asks that a read be retried.

fails: write_without_key_runs_once | 什么都不重试
fails: write_without_key_says_why | 什么都不重试
fails: blank_key_is_no_key | 什么都不重试
fails: write_with_key_retried | 应调用 3 次后成功
fails: read_tool_retried | 照常重试
fails: permission_error_not_retried | 什么都不重试
fails: max_retries_respected | max_retries=2
fails: waits_on_clock | 没有在模拟时钟上等待
"""


async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
    try:
        return await tool_fn(*args, **kwargs), None
    except Exception:
        return None, "写操作没有 idempotency_key，没有重试"
