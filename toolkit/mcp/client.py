"""An MCP server's tools in a ToolRegistry: the course as an MCP client over stdio.

    with MCPServer() as server:                      # python -m toolkit.mcp.server, as a subprocess
        run = run_agent("哪个类别销售额最高？", registry=server.registry())

`MCPServer` starts the server on first use, lists its tools with their JSON
schemas (`registry()` offers them to the model like local tools) and sends each
call over MCP. Each call's CallToolResult becomes the toolkit's envelope
(toolkit.mcp.results), which the executor opens as it opens a local tool's.

The connection lives on a thread of its own (its own event loop), so a
notebook, a script and the executor's loop all reach it the same way. A call
has a time limit in real seconds (`call_timeout`): a server that hangs gives a
retryable TIMEOUT, one that dies gives a retryable CONNECTION error; either way
the server is stopped and the next call starts it again (`starts` counts them).
A JSON-RPC error in answer to the call is the server's own: INVALID_ARGUMENTS
(fatal) for bad parameters, else SERVER_ERROR (retryable), and the server stays up.
Nothing a server does raises into the caller, and nothing waits without a limit.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import tempfile
import threading
import time
from typing import Any, Iterable, Sequence

import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from ..redaction import safe_str
from ..registry import Tool, ToolRegistry
from ..results import ErrorCode
from ..schemas import SCHEMA_CHECK_SECONDS
from .results import APPROVAL_META, KIND_META, envelope_from_result, error_envelope

__all__ = ["MCPServer", "COURSE_SERVER"]

COURSE_SERVER = ("-m", "toolkit.mcp.server")
STOP_SECONDS = 5.0  # how long closing a connection may take before it is abandoned


def _jsonrpc_error(name: str, exc: MCPError, source: dict) -> dict:
    """A JSON-RPC error answering tools/call: bad parameters are fatal, anything else the server's own failure."""
    refused = exc.code in (types.INVALID_PARAMS, types.METHOD_NOT_FOUND)
    return error_envelope(ErrorCode.INVALID_ARGUMENTS if refused else ErrorCode.SERVER_ERROR,
                          f"MCP 服务器没有执行 {name}（JSON-RPC 错误 {exc.code}：{safe_str(exc.message, 200)}）",
                          not refused, source)


def _names(given: Iterable[str] | str) -> set[str]:
    """One tool name (a str) or names, as a set."""
    return {given} if isinstance(given, str) else set(given)


class MCPServer:
    """One MCP server over stdio, started as a subprocess when first needed (see the module's doc).

    command/args: how to start it (default: this Python, `-m toolkit.mcp.server`, plus `extra_args`);
    env: extra environment variables (the TOOLKIT_* ones of this process are passed on);
    call_timeout: real seconds one call may take; timeouts: a tool name -> its own limit, where one tool
    may take longer or must fail faster than the rest; start_timeout: real seconds to start and list tools.
    """

    def __init__(self, command: str | None = None, args: Sequence[str] | None = None, *,
                 extra_args: Sequence[str] = (), env: dict[str, str] | None = None,
                 call_timeout: float = 10.0, timeouts: dict[str, float] | None = None,
                 start_timeout: float = 30.0, name: str = "mcp") -> None:
        self.command = command or sys.executable
        self.args = [*(COURSE_SERVER if args is None else args), *extra_args]
        self.env = {k: v for k, v in os.environ.items() if k.startswith("TOOLKIT_")} | dict(env or {})
        self.call_timeout, self.start_timeout, self.name = call_timeout, start_timeout, name
        self.timeouts = dict(timeouts or {})
        for limit in (call_timeout, start_timeout, *self.timeouts.values()):
            if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
                raise ValueError(f"时间上限应是大于 0 的秒数，收到 {limit!r}：请改成正数，例如 10")
        self.starts = 0
        self.tools: dict[str, types.Tool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._session: ClientSession | None = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task | None = None
        self._starting: asyncio.Lock | None = None  # made on the connection's loop: one start at a time
        self._errlog: Any = None  # the running server's stderr, kept for the error message when it dies

    # --- the connection's own thread and loop -------------------------------------
    def _submit(self, coro: Any) -> concurrent.futures.Future:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name=f"{self.name}-client",
                                                daemon=True)
                self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def _connect(self) -> ClientSession:
        """The live session, started (and its tools listed) when there is none."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:  # calls arriving together while the server is down start it once
            if self._session is not None:
                return self._session
            return await self._start()

    async def _start(self) -> ClientSession:
        ready, stop = asyncio.Event(), asyncio.Event()
        failure: list[BaseException] = []
        if self._errlog is not None:
            self._errlog.close()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8")

        async def hold() -> None:  # enters and leaves the SDK's contexts in one task, as anyio requires
            params = StdioServerParameters(command=self.command, args=self.args, env=self.env)
            mine = None
            try:
                async with stdio_client(params, errlog=self._errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        listed = await session.list_tools()
                        self.tools = {tool.name: tool for tool in listed.tools}
                        self._session = mine = session
                        ready.set()
                        await stop.wait()
            except Exception as exc:
                failure.append(exc)
            finally:
                if self._session is mine:  # a late finish never drops the session started after it
                    self._session = None
                ready.set()

        self.starts += 1
        self._stop, self._holder = stop, asyncio.get_running_loop().create_task(hold())
        try:
            await asyncio.wait_for(ready.wait(), self.start_timeout)
        except TimeoutError:
            await self._disconnect()
            raise TimeoutError(f"MCP 服务器 {self.start_timeout:g} 秒内没有启动完成") from None
        if self._session is None:
            await self._disconnect()
            why = safe_str(failure[0], 200) if failure else "连接已关闭"
            raise ConnectionError(f"MCP 服务器启动失败（{why}）{self._stderr_tail()}")
        return self._session

    async def _disconnect(self) -> None:
        """Stop the server process (bounded: a holder that will not finish is cancelled and left)."""
        holder, stop = self._holder, self._stop
        self._session = self._holder = self._stop = None
        if holder is None or stop is None:
            return
        stop.set()
        done, _ = await asyncio.wait({holder}, timeout=STOP_SECONDS)
        if not done:
            holder.cancel()
            await asyncio.wait({holder}, timeout=STOP_SECONDS)

    def _stderr_tail(self) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.seek(0)
            tail = self._errlog.read()[-300:].strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f"；服务器最后的输出：{safe_str(tail[-1], 200)}" if tail else ""

    # --- calls ------------------------------------------------------------------
    async def _call(self, name: str, arguments: dict) -> dict:
        source = {"mcp_server": self.name, "tool": name}
        try:
            session = await self._connect()
        except (TimeoutError, ConnectionError, OSError) as exc:
            return error_envelope(ErrorCode.CONNECTION, safe_str(exc, 400), True, source)
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        limit = self.timeouts.get(name, self.call_timeout)
        sent = time.monotonic()
        try:  # send_request, not call_tool: the outputSchema check is ours (an error result, not an exception)
            result = await asyncio.wait_for(session.send_request(request, types.CallToolResult), limit)
        except TimeoutError:
            await self._disconnect()
            return error_envelope(ErrorCode.TIMEOUT, f"MCP 工具 {name} 在 {limit:g} 秒内没有返回，"
                                  "已停止服务器，下次调用会重新启动它", True, source)
        except Exception as exc:  # the connection closed (the server died), a JSON-RPC error, a malformed result
            if isinstance(exc, MCPError) and exc.code != types.CONNECTION_CLOSED:
                return _jsonrpc_error(name, exc, source)  # the server answered: it stays up
            closed = isinstance(exc, MCPError)
            why = "连接断开，服务器进程可能已退出" if closed else f"{type(exc).__name__}: {safe_str(exc, 200)}"
            await self._disconnect()
            return error_envelope(ErrorCode.CONNECTION, f"MCP 服务器在调用 {name} 时出错（{why}）"
                                  f"{self._stderr_tail()}；已停止它，下次调用会重新启动", True, source)
        tool = self.tools.get(name)
        try:  # the server's answer, read within what is left of the call's time limit (its outputSchema check too)
            return envelope_from_result(result, tool.output_schema if tool else None, source,
                                        check_seconds=limit - (time.monotonic() - sent))
        except Exception as exc:  # the MCP boundary: an answer our reading cannot take is an error result
            return error_envelope(ErrorCode.TOOL_ERROR, f"MCP 服务器对 {name} 的回答无法读取（{type(exc).__name__}: "
                                  f"{safe_str(exc, 160)}），结果不可信", False, source)

    async def call(self, name: str, arguments: dict | None = None) -> dict:
        """Call tool `name` over MCP from any event loop: the toolkit's envelope, never an exception."""
        return await asyncio.wrap_future(self._submit(self._call(name, dict(arguments or {}))))

    def call_sync(self, name: str, arguments: dict | None = None) -> dict:
        """`call` for code without an event loop."""
        return self._submit(self._call(name, dict(arguments or {}))).result()

    def list_tools(self) -> list[types.Tool]:
        """The server's tools (starting it if needed); ConnectionError / TimeoutError when it cannot start."""
        self._submit(self._connect()).result()
        return list(self.tools.values())

    def registry(self, names: Iterable[str] | None = None, *,
                 needs_approval: Iterable[str] | str | None = None) -> ToolRegistry:
        """A ToolRegistry of the server's tools (or of those in `names`): their schemas as listed, each call sent
        over MCP.

        A tool's kind comes from `_meta["toolresultlab/kind"]`; it writes unless it is annotated readOnlyHint
        (MCP's default), so a timed-out call of it is not retried. Which calls wait for a person's yes under
        run_agent: the tools in `needs_approval` (a name or names) when given; else what the server says in
        `_meta["toolresultlab/needs_approval"]` (the course's server marks send_notice); else, for a server that
        says nothing, every tool that writes (MCP asks hosts to let a person deny a call). Raises ValueError
        for a name in `names` or `needs_approval` the server does not list.
        """
        listed = self.list_tools()
        known = {tool.name for tool in listed}
        wanted = None if names is None else _names(names)
        asked = None if needs_approval is None else _names(needs_approval)
        for given in (wanted, asked):
            unknown = sorted((given or set()) - known)
            if unknown:
                raise ValueError(f"MCP 服务器没有列出工具 {'、'.join(unknown)}（它列出的：{'、'.join(sorted(known))}）")
        # a model's arguments are checked against the server's inputSchema within the shortest call limit
        registry = ToolRegistry(check_seconds=min(SCHEMA_CHECK_SECONDS, self.call_timeout, *self.timeouts.values()))
        for tool in listed:
            if wanted is not None and tool.name not in wanted:
                continue
            read_only = bool(tool.annotations and tool.annotations.read_only_hint)
            meta = tool.meta or {}
            kind, marked = meta.get(KIND_META), meta.get(APPROVAL_META)
            asks = (tool.name in asked if asked is not None else marked if isinstance(marked, bool)
                    else not read_only)
            registry.add(Tool(tool.name, self._caller(tool.name), tool.description or tool.name,
                              dict(tool.input_schema), kind if kind in ("query", "read", "write") else None,
                              writes=not read_only, needs_approval=asks))
        return registry

    def _caller(self, name: str) -> Any:
        async def call_over_mcp(**arguments: Any) -> dict:
            return await self.call(name, arguments)
        call_over_mcp.__name__ = name
        return call_over_mcp

    @property
    def running(self) -> bool:
        return self._session is not None

    def close(self) -> None:
        """Stop the server and the connection's thread (safe to call twice)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._disconnect(), loop).result(timeout=2 * STOP_SECONDS + 1)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=STOP_SECONDS)
        if not loop.is_running():
            loop.close()

    def __enter__(self) -> "MCPServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
