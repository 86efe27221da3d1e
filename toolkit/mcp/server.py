"""The course's tools served over MCP (stdio): `python -m toolkit.mcp.server [--demo]`.

Each tool of `toolkit.tools.default_registry()` is listed with its JSON schema
(inputSchema), an outputSchema for the data it returns, readOnlyHint, and whether a
call waits for a person's yes (`_meta["toolresultlab/needs_approval"]`); a call
runs the tool and opens its {status, data, source, error} envelope once:
success is the data as structuredContent (and as JSON text), a failure is
isError with the message as text and the toolkit's error code and kind in
`_meta["toolresultlab/error"]` (a client that does not know that key still
reads a plain MCP error).

`--demo` adds the tools the course and its tests use to show what can go wrong
after a call leaves: a tool that waits (a hanging server), one that ends the
server mid-call, image and resource blocks, structured content that breaks its
own outputSchema, and error results with and without the toolkit's code; and chapter
10's write, send_notice (into an outbox of the server's own), which needs approval.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ..registry import ToolRegistry
from ..results import classify_error, unwrap_envelope
from ..tools import default_registry
from ..tools.orders import Outbox, register_send_notice
from .results import APPROVAL_META, ERROR_META, KIND_META


_CATEGORY_SALES = {"type": "object", "properties": {"category": {"type": "string"}, "sales": {"type": "number"}},
                   "required": ["category", "sales"]}
OUTPUT_SCHEMAS: dict[str, dict] = {
    "analyze_sales_csv": {
        "type": "object",
        "properties": {"row_count": {"type": "integer"}, "total_sales": {"type": "number"},
                       "category_sales": {"type": "array", "items": _CATEGORY_SALES},
                       "highest_category": {"type": "string"}, "highest_sales": {"type": "number"}},
        "required": ["total_sales", "category_sales", "highest_category"]},
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "condition": {"type": "string"},
                       "temp_c": {"type": "number"}, "temp_low_c": {"type": "number"}},
        "required": ["city", "condition"]},
    "search_flights": {
        "type": "object",
        "properties": {"count": {"type": "integer"}, "flights": {"type": "array", "items": {"type": "object"}}},
        "required": ["count", "flights"]},
}

# a 1x1 PNG: the image block the demo's chart tool returns
TINY_PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2d2b5c60000000049454e44ae426082")).decode()

DEMO_TOOLS = [
    types.Tool(name="wait_seconds", description="等待若干秒后返回（演示：服务器卡住）",
               input_schema={"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}},
                             "required": ["seconds"], "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="exit_now", description="调用进行到一半时让服务器进程退出（演示：服务器崩溃）",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="server_pid", description="服务器进程的 pid",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="sales_chart", description="销售额图表：一张图片和一份 CSV 资源",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="sales_total", description="总销售额；broken=true 时返回不符合 outputSchema 的结构化结果",
               input_schema={"type": "object", "properties": {"broken": {"type": "boolean"}},
                             "additionalProperties": False},
               output_schema={"type": "object", "properties": {"total_sales": {"type": "number"}},
                              "required": ["total_sales"]},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="handler_raises", description="服务器的处理函数抛出异常（演示：JSON-RPC 错误，不是工具结果）",
               input_schema={"type": "object", "properties": {}, "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="report_failure", description="返回一个错误结果（isError）；with_code=false 时不带工具箱的错误码",
               input_schema={"type": "object",
                             "properties": {"code": {"type": "string"}, "retryable": {"type": "boolean"},
                                            "with_code": {"type": "boolean"}},
                             "additionalProperties": False},
               annotations=types.ToolAnnotations(read_only_hint=True)),
]


def _text(value: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=value if isinstance(value, str) else
                              json.dumps(value, ensure_ascii=False))]


def error_result(message: str, code: str | None, retryable: bool = False) -> types.CallToolResult:
    """An isError result: the message as text, the toolkit's code and kind in _meta when given."""
    meta = {ERROR_META: {"code": code, "retryable": retryable}} if code else None
    return types.CallToolResult(content=_text(message), is_error=True, _meta=meta)


def success_result(data: Any) -> types.CallToolResult:
    """The data as JSON text, and as structuredContent when it is an object."""
    return types.CallToolResult(content=_text(data), structured_content=data if isinstance(data, dict) else None)


def course_tools(registry: ToolRegistry) -> list[types.Tool]:
    """Each tool as MCP lists it: schemas, readOnlyHint, and in _meta its kind and whether it needs approval."""
    return [types.Tool(name=tool.name, description=tool.description, input_schema=tool.parameters,
                       output_schema=OUTPUT_SCHEMAS.get(tool.name),
                       annotations=types.ToolAnnotations(read_only_hint=not tool.writes),
                       _meta={APPROVAL_META: tool.needs_approval, **({KIND_META: tool.kind} if tool.kind else {})})
            for tool in registry]


async def run_course_tool(registry: ToolRegistry, name: str, arguments: dict) -> types.CallToolResult:
    tool = registry.get(name)
    if tool is None:
        return error_result(f"没有名为 {name} 的工具", "UNKNOWN_TOOL")
    checked, refused = registry.check_arguments(tool, arguments)
    if refused is not None or checked is None:  # check_arguments gives one of the two
        if refused is None:
            return error_result("参数无效", "INVALID_ARGUMENTS")
        return error_result(refused.message, str(refused.error_code))
    try:
        value = await anyio.to_thread.run_sync(lambda: tool.fn(**checked))
    except Exception as exc:  # the tool raised: its kind and code, as any error result
        raised = classify_error(exc)
        return error_result(raised.message, str(raised.error_code), raised.retryable)
    data, _source, failed = unwrap_envelope(value)
    if failed is not None:
        return error_result(failed.message, str(failed.error_code), failed.retryable)
    return success_result(data)


async def run_demo_tool(name: str, arguments: dict) -> types.CallToolResult:
    if name == "wait_seconds":
        await anyio.sleep(float(arguments.get("seconds", 0)))
        return success_result({"waited": arguments.get("seconds", 0)})
    if name == "exit_now":
        await anyio.sleep(0.2)  # the call is on its way: the client is waiting for the answer
        os._exit(3)
    if name == "server_pid":
        return success_result({"pid": os.getpid()})
    if name == "sales_chart":
        return types.CallToolResult(content=[
            types.TextContent(type="text", text="各类别销售额柱状图"),
            types.ImageContent(type="image", data=TINY_PNG, mime_type="image/png"),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                uri="file:///data/input/sales.csv", mime_type="text/csv",
                text="category,quantity,unit_price\n显示器,5,899\n"))])
    if name == "sales_total":
        return success_result({"total_sales": "九千六百九十二" if arguments.get("broken") else 9692})
    if name == "handler_raises":
        raise RuntimeError("演示：处理函数出错")
    # report_failure
    return error_result("演示用的错误：服务暂时不可用", arguments.get("code", "UNAVAILABLE")
                        if arguments.get("with_code", True) else None, bool(arguments.get("retryable", True)))


def build_server(demo: bool = False) -> Server:
    registry = register_send_notice(default_registry(), Outbox()) if demo else default_registry()
    listed = course_tools(registry) + (DEMO_TOOLS if demo else [])
    demo_names = {tool.name for tool in DEMO_TOOLS} if demo else set()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name in demo_names:
            return await run_demo_tool(params.name, arguments)
        return await run_course_tool(registry, params.name, arguments)

    return Server("tool-result-lab", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(demo: bool = False) -> None:
    server = build_server(demo)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The course's tools over MCP (stdio)")
    parser.add_argument("--demo", action="store_true",
                        help="also list the demo tools (hang, crash, blocks, errors, a write)")
    anyio.run(serve, parser.parse_args(argv).demo)


if __name__ == "__main__":
    main()
