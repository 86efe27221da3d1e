"""MCP as a wire format: a tool as MCP lists it, a result as a JSON-RPC response to tools/call.

`MCP_FORMAT` is registered under "mcp" (toolkit.wire.register_format) when
toolkit.mcp is imported, so `registry.tools("mcp")`, `parse_tool_call(request,
fmt="mcp")` and `format_tool_message(..., fmt="mcp")` speak MCP:
- tool_schema: {"name", "description", "inputSchema"} (an MCP Tool);
- result_message: {"jsonrpc": "2.0", "id": call id, "result": CallToolResult}, the
  toolkit's tool content as a text block, and as structuredContent when it is a
  JSON object; isError from the result;
- parse_call: a tools/call request {"jsonrpc", "id", "method", "params": {"name", "arguments"}}.
tests/test_mcp.py validates all three against the SDK's own pydantic types, key by key as the SDK writes them
(camelCase: the SDK's models also accept snake_case field names, which MCP peers do not read).
"""
from __future__ import annotations

import json
from typing import Any

from ..wire import ToolCall, WireFormat, field_of, make_call, register_format

__all__ = ["MCP_FORMAT"]


def _tool_schema(name: str, description: str, parameters: dict) -> dict:
    return {"name": name, "description": description, "inputSchema": parameters}


def _result_message(call_id: str, content: str, is_error: bool) -> dict:
    result: dict[str, Any] = {"content": [{"type": "text", "text": content}], "isError": bool(is_error)}
    try:
        structured = json.loads(content)
    except (TypeError, ValueError):
        structured = None
    if isinstance(structured, dict):
        result["structuredContent"] = structured
    return {"jsonrpc": "2.0", "id": call_id, "result": result}


def _parse_call(raw: Any) -> ToolCall:
    params = field_of(raw, "params")
    return make_call(field_of(raw, "id"), field_of(params, "name") if params is not None else None,
                     field_of(params, "arguments") if params is not None else None)


def _looks_like(raw: Any) -> bool:
    return field_of(raw, "method") == "tools/call"


MCP_FORMAT = register_format(WireFormat("mcp", _tool_schema, _result_message, _parse_call, _looks_like))
