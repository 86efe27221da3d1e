# 我的工具包：parse（接在 ToolExecutor(parse=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def parse_tool_result(raw, max_chars):
    """字典和列表原样交回；文本去掉首尾空白，超长就只留开头（结尾的结论会丢）。"""
    if isinstance(raw, str):
        return raw.strip()[:max_chars]
    return raw

PIECE = parse_tool_result
