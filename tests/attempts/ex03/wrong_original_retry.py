"""The original course's call_tool_with_retry (waits moved to the clock): only TimeoutError and
PermissionError are told apart (a ValueError is retried), max_retries counts attempts, max_retries=0 returns
None, Retry-After and the deadline are ignored, a sync tool is awaited.

fails: permission_error_not_retried | 只调用 1 次
fails: max_retries_counts_retries | 表示第一次之后
fails: max_retries_zero | None（是不是忘了 return？）
fails: retry_after_honoured | Retry-After 5 秒
fails: deadline_respected | 不应在第 10 秒之后
fails: sync_tool_works | 同步
"""
import random

from toolkit import get_clock


async def retry_with_deadline(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    clock = get_clock()
    for attempt in range(max_retries):
        try:
            result = await tool_fn(*args, **kwargs)
            return result, None
        except TimeoutError:
            if attempt == max_retries - 1:
                return None, "请求超时，已重试 3 次仍未成功"
            await clock.sleep((2 ** attempt) + random.uniform(0, 1))
        except PermissionError:
            return None, "权限不足，需要用户授权"
        except Exception as e:
            if attempt == max_retries - 1:
                return None, f"工具执行失败: {str(e)}"
            await clock.sleep(2 ** attempt)
