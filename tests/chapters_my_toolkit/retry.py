# 我的工具包：retry（接在 ToolExecutor(retry=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

import inspect

from toolkit import classify_error, get_clock

async def call_tool_with_retry(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    """调用工具，只重试暂时性失败；返回 (结果, None) 或 (None, 错误说明)。"""
    clock = get_clock()
    start = clock.now()
    for attempt in range(max_retries + 1):  # 第一次 + max_retries 次重试
        try:
            result = tool_fn(*args, **kwargs)
            if inspect.isawaitable(result):  # 同步、异步工具都支持
                result = await result
            return result, None
        except Exception as exc:
            info = classify_error(exc)
        if not info.retryable:
            return None, info.message  # 致命错误：一次就交出去
        if attempt == max_retries:
            break
        wait = clock.random.uniform(0, min(30, 2 ** attempt))  # 指数退避 + 抖动，30 秒封顶
        wait = max(wait, info.retry_after or 0)  # 至少等够 Retry-After
        if clock.now() - start + wait > deadline:  # 等完就超过总时限：不等了
            return None, f"{info.message}；共尝试 {attempt + 1} 次，剩余时间不够再试一次"
        await clock.sleep(wait)
    return None, f"{info.message}；共尝试 {max_retries + 1} 次"


PIECE = call_tool_with_retry
