"""Writes the content and the three wrappers itself, reading the ids by hand (call_id first for Responses)."""
import json

WRAP = {
    "openai_chat": lambda i, text, failed: {"role": "tool", "tool_call_id": i, "content": text},
    "openai_responses": lambda i, text, failed: {"type": "function_call_output", "call_id": i, "output": text},
    "anthropic": lambda i, text, failed: {"type": "tool_result", "tool_use_id": i, "content": text,
                                          "is_error": failed},
}


def format_tool_turn(tool_calls, results, fmt="openai_chat"):
    if fmt not in WRAP:
        raise ValueError(f"未知的 fmt：{fmt!r}")
    out = []
    for raw in tool_calls:
        call_id = raw.get("call_id") or raw["id"]
        result = results.get(call_id)
        if result is None:
            payload = {"status": "error", "result": None, "error": "没有结果", "error_type": "fatal"}
        else:
            payload = {"status": result.status, "result": result.data, "error": result.error,
                       "error_type": result.error_type}
        out.append(WRAP[fmt](call_id, json.dumps(payload, ensure_ascii=False, default=str),
                             payload["status"] == "error"))
    return [{"role": "user", "content": out}] if fmt == "anthropic" and out else ([] if fmt == "anthropic" else out)
