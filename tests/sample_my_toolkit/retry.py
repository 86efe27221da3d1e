# 我的工具包：retry（接在 ToolExecutor(retry=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def call_tool_with_retry(tool_fn, *args, max_retries=3, **kwargs):
    """只重试连接错误；返回 (结果, 错误)。"""
    for attempt in range(max_retries + 1):
        try:
            return tool_fn(*args, **kwargs), None
        except ConnectionError as exc:
            error = f"连接失败：{exc}"
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"
    return None, error

PIECE = call_tool_with_retry
