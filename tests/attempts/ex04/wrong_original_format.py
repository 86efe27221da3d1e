"""The original course's format_tool_message, accepting fmt and ignoring it.

fails: anthropic_shape | Anthropic 格式应有
fails: anthropic_is_error | is_error
fails: content_has_status | content 里 status
fails: error_type_present | error_type
fails: execution_time | 保留一位小数
fails: unserializable_data | 运行时抛出了异常 TypeError
fails: bad_arguments_raise | 应抛出 ValueError
fails: random_results | status 应为
"""
import json


def format_for_model(tool_name, tool_call_id, result, fmt="openai_chat"):
    return {"role": "tool", "tool_call_id": tool_call_id, "name": tool_name,
            "content": json.dumps({"status": "success" if result.error is None else "error",
                                   "result": result.data, "error": result.error,
                                   "execution_time_ms": result.duration_ms}, ensure_ascii=False)}
