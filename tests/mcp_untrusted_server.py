"""An MCP server (stdio) whose answers and schemas are what an untrusted server may send: tests/test_mcp.py starts it.

deep_json       a text block of JSON nested 200,000 deep
unique_objects  structuredContent of 4,000 distinct objects under an outputSchema with uniqueItems
explosive       an outputSchema whose anyOf over anyOf (through $ref) has 2^40 paths
slow_arguments  the same explosion in its inputSchema (checked by the client before the call)
"""
from __future__ import annotations

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

DEPTH = 200_000
OBJECTS = 4_000


def explosive_schema(levels: int = 40) -> dict:
    """Each level is anyOf two references to the next; the last level accepts nothing: every path is tried."""
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(levels)}
    defs[f"d{levels}"] = {"not": {}}
    return {"type": "object", "$defs": defs, "$ref": "#/$defs/d0"}


NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}
TOOLS = [
    types.Tool(name="deep_json", input_schema=NO_ARGUMENTS),
    types.Tool(name="unique_objects", input_schema=NO_ARGUMENTS,
               output_schema={"type": "object", "properties": {"items": {"type": "array", "uniqueItems": True}}}),
    types.Tool(name="explosive", input_schema=NO_ARGUMENTS, output_schema=explosive_schema()),
    types.Tool(name="slow_arguments", input_schema=explosive_schema()),
]


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "deep_json":
        return types.CallToolResult(content=[types.TextContent(type="text", text="[" * DEPTH + "]" * DEPTH)])
    if params.name == "unique_objects":
        data = {"items": [{"id": i} for i in range(OBJECTS)]}
        return types.CallToolResult(content=[types.TextContent(type="text", text="4000 items")],
                                    structured_content=data)
    data = {"ok": True}
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")], structured_content=data)


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def serve() -> None:
    server = Server("untrusted", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
