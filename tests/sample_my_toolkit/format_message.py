# 我的工具包：format_message（接在 run_agent(format_message=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

import json

def format_tool_message(tool_name, tool_call_id, result):
    """生成 tool 消息：状态、数据和错误（还没写 error_type）。"""
    content = {"status": result.status, "result": result.data, "error": result.error}
    return {"role": "tool", "tool_call_id": tool_call_id, "content": json.dumps(content, ensure_ascii=False)}

PIECE = format_tool_message
