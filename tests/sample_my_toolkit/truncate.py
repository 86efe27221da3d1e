# 我的工具包：truncate（接在 ToolExecutor(truncate=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def smart_truncate(text, max_chars):
    """超长就只留开头（第 02 章第一版：结尾的结论会丢）。"""
    if len(text) <= max_chars:
        return text
    return text[:max_chars - 10] + "…（已截断）"

PIECE = smart_truncate
