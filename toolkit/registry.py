"""The tools a model may call: Tool, ToolRegistry, their JSON schemas, and argument checking.

`ToolRegistry.register(fn, description=..., parameters=..., kind=..., writes=..., fallback=...)`
adds a tool; `registry.tools(fmt)` is the request's tools list in any wire format
(toolkit.wire); `check_arguments` checks a call's decoded arguments against the
tool's schema (jsonschema, loaded on first use) and says in Chinese what is wrong.

The schema is applied to what the model sent, and the tool's author (or an MCP
server) wrote it: toolkit.schemas checks in bounded time (patterns in linear time,
every keyword on the clock, `check_seconds` per call). A pattern no linear-time
engine can run (backreferences, lookaround, atomic groups, possessive repeats,
conditionals), a broken schema, or a check past its time limit makes the call
BAD_TOOL_SCHEMA, saying why; the tool does not run.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from . import wording
from .fitting import ToolKind
from .redaction import safe_str
from .results import FATAL, ErrorCode, ErrorInfo
from .schemas import SCHEMA_CHECK_SECONDS, SchemaTooSlow, schema_problem, schema_validator
from .wire import ToolCall, WireFormat, get_format

__all__ = ["Tool", "ToolRegistry"]

_PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean",
               list: "array", dict: "object"}


def _schema_from_signature(fn: Callable) -> dict:
    """A JSON schema from a function's signature (str/int/float/bool/list/dict hints)."""
    props: dict[str, dict] = {}
    required: list[str] = []
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:
        hints = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        json_type = _PY_TO_JSON.get(hints.get(name))
        props[name] = {"type": json_type} if json_type else {}
        if param.default is param.empty:
            required.append(name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    """A registered tool: the function and what the model is told about it.

    kind: "query" / "read" / "write" preprocessing (see parse_tool_result).
    writes: True if the tool changes something: it is then not retried after
    a timeout unless the call carries an "idempotency_key" argument.
    fallback: the name of a tool to use while this one's circuit is open.
    needs_approval: run_agent runs a call to it only after a person approves (toolkit.approval).
    """

    name: str
    fn: Callable[..., Any]
    description: str
    parameters: dict
    kind: ToolKind | None = None
    writes: bool = False
    fallback: str | None = None
    needs_approval: bool = False

    def schema(self, fmt: "str | WireFormat" = "openai_chat") -> dict:
        """This tool's entry in a request's tools list, in wire format `fmt` (see toolkit.wire)."""
        return get_format(fmt).tool_schema(self.name, self.description, self.parameters)

    def openai_schema(self) -> dict:
        """Chat Completions: {"type": "function", "function": {...}}."""
        return self.schema("openai_chat")


class ToolRegistry:
    """The tools a model may call, their JSON schemas, and argument checking."""

    def __init__(self, tools: Iterable[Tool] = (), *, check_seconds: float = SCHEMA_CHECK_SECONDS) -> None:
        self.check_seconds = check_seconds  # real seconds one argument check may take (toolkit.schemas)
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, tuple[Tool, Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        """Add `tool` (a tool of the same name is replaced). ValueError (in Chinese) for a tool the model could
        not call: no name, a function that is not one, a schema that is not a dict, an unknown kind."""
        if not isinstance(tool.name, str) or not tool.name:
            raise ValueError(f"工具需要一个非空的名字，收到 {tool.name!r}：请用 name=\"工具名\" 注册，或给函数起个名字")
        if not callable(tool.fn):
            raise ValueError(f"工具 {tool.name} 应是一个函数，收到 {type(tool.fn).__name__}：请传函数本身，不要加括号调用它")
        if not isinstance(tool.parameters, dict):
            raise ValueError(f"工具 {tool.name} 的参数定义应是 JSON schema（dict），收到 {type(tool.parameters).__name__}："
                             "请传 {\"type\": \"object\", \"properties\": {...}}，或不传（从函数签名生成）")
        if tool.kind not in (None, "query", "read", "write"):
            raise ValueError(f"工具 {tool.name} 的 kind 只能是 None、'query'、'read' 或 'write'，收到 {tool.kind!r}：请改成其中之一")
        self._tools[tool.name] = tool
        return tool

    def _validator(self, tool: Tool) -> Any:
        """The tool's JSON-schema validator, built once per registered tool."""
        cached = self._validators.get(tool.name)
        if cached is None or cached[0] is not tool:
            cached = self._validators[tool.name] = (tool, schema_validator(tool.parameters))
        return cached[1]

    def register(self, fn: Callable | None = None, *, name: str | None = None,
                 description: str | None = None, parameters: dict | None = None,
                 kind: ToolKind | None = None, writes: bool = False, fallback: str | None = None,
                 needs_approval: bool = False):
        """Register `fn` (also usable as a decorator). The schema defaults to one from its signature."""
        def wrap(f: Callable) -> Callable:
            if not callable(f):
                raise ValueError(f"register 需要工具函数本身，收到 {type(f).__name__}：请传函数名，不要加括号调用它")
            own = name or f.__name__
            doc = (inspect.getdoc(f) or "").strip()
            self.add(Tool(own, f, description or doc or own, parameters or _schema_from_signature(f), kind, writes,
                          fallback, needs_approval))
            return f
        return wrap(fn) if fn is not None else wrap

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def tools(self, fmt: "str | WireFormat" = "openai_chat") -> list[dict]:
        """The request's `tools=[...]` list in wire format `fmt` (ValueError for an unknown one)."""
        wire = get_format(fmt)
        return [wire.tool_schema(t.name, t.description, t.parameters) for t in self._tools.values()]

    def openai_tools(self) -> list[dict]:
        """The `tools=[...]` list for Chat Completions."""
        return self.tools("openai_chat")

    def check_arguments(self, tool: Tool, arguments: Any) -> tuple[dict | None, ErrorInfo | None]:
        """Check a call's arguments against `tool`'s schema: (arguments, None) or (None, why they were refused).

        `arguments` is a ToolCall (its decoded `parsed` arguments are checked, and
        arguments that are not JSON are refused with INVALID_ARGUMENTS_JSON) or
        arguments already decoded. Nothing is decoded here: text is not an object.
        """
        if isinstance(arguments, ToolCall):
            if arguments.parse_error is not None:
                return None, ErrorInfo(FATAL, ErrorCode.INVALID_ARGUMENTS_JSON,
                                       wording.arguments_not_json(tool.name, arguments.parse_error))
            arguments = arguments.parsed
        if not isinstance(arguments, dict):
            return None, ErrorInfo(FATAL, ErrorCode.INVALID_ARGUMENTS,
                                   wording.arguments_not_object(tool.name, type(arguments).__name__))
        try:
            problem = schema_problem(self._validator(tool), arguments, self.check_seconds)
        except SchemaTooSlow:
            return None, ErrorInfo(FATAL, ErrorCode.BAD_TOOL_SCHEMA,
                                   wording.schema_too_slow(tool.name, self.check_seconds))
        except Exception as exc:  # a broken schema is the tool author's bug: say so
            return None, ErrorInfo(FATAL, ErrorCode.BAD_TOOL_SCHEMA,
                                   wording.bad_tool_schema(tool.name, safe_str(exc, 200)))
        if problem is not None:
            return None, ErrorInfo(FATAL, ErrorCode.INVALID_ARGUMENTS, wording.arguments_invalid(tool.name, *problem))
        return arguments, None
