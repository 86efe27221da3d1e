# 我的工具包：format_message（接在 run_agent(format_message=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

import json

from datetime import date, datetime

SUGGESTION = {
    "retryable": "可以稍后重试一次；不要无限重试",
    "fatal": "重试没有用：如实告诉用户原因，不要编造结果",
    "partial": "先用已经拿到的部分回答，并说明缺了什么",
}

WIRE = {  # 三种接口：同一段 JSON 文本，外面的包装不同
    "openai_chat": lambda call_id, text, failed: {"role": "tool", "tool_call_id": call_id, "content": text},
    "openai_responses": lambda call_id, text, failed: {"type": "function_call_output", "call_id": call_id,
                                                       "output": text},
    "anthropic": lambda call_id, text, failed: {"type": "tool_result", "tool_use_id": call_id,
                                                "content": text, "is_error": failed},
}

def readable(value):
    """json 不认识的值，写成忠实的文字。"""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return f"<二进制数据，{len(value)} 字节>"
    return str(value)

def format_tool_message(tool_name, tool_call_id, result, fmt="openai_chat"):
    """课堂版：把一个 ToolResult 包成模型接口要的那条消息。"""
    if not tool_call_id:
        raise ValueError("tool_call_id 不能为空：模型靠它把结果对应到自己的调用")
    if fmt not in WIRE:
        raise ValueError(f"fmt 只能是 {list(WIRE)} 之一，收到 {fmt!r}")
    text = json.dumps({
        "status": result.status,                         # success / partial / error
        "result": result.data,
        "error": result.error,
        "error_type": result.error_type,                 # retryable / fatal / partial：重试有没有用
        "error_code": result.error_code,                 # TIMEOUT、FILE_NOT_FOUND……：具体是哪种错
        "suggestion": SUGGESTION.get(result.error_type),
        "execution_time_ms": round(result.duration_ms, 1),
    }, ensure_ascii=False, default=readable)
    return WIRE[fmt](tool_call_id, text, result.status == "error")


PIECE = format_tool_message
