"""Tools over MCP (the Model Context Protocol), with the official `mcp` SDK over stdio.

- `toolkit.mcp.server`: the course's tools served by a real MCP server
  (`python -m toolkit.mcp.server`, `--demo` adds tools that hang, crash, return
  image/resource blocks, break their outputSchema or report errors).
- `MCPServer` (toolkit.mcp.client): the client side; `registry()` lists the
  server's tools into a ToolRegistry for `ToolExecutor` / `run_agent`.
- `envelope_from_result` (toolkit.mcp.results): a CallToolResult read as the
  toolkit's envelope, so the executor builds the ToolResult.
- `MCP_FORMAT` (toolkit.mcp.wire): MCP's tool result as a wire format,
  registered under "mcp" when this package is imported.
"""
from .client import MCPServer
from .results import INVALID_STRUCTURED_CONTENT, envelope_from_result
from .wire import MCP_FORMAT

__all__ = ["MCPServer", "envelope_from_result", "INVALID_STRUCTURED_CONTENT", "MCP_FORMAT"]
