"""The tools a model may call: Tool, ToolRegistry, their JSON schemas, and argument checking.

`ToolRegistry.register(fn, description=..., parameters=..., kind=..., writes=..., fallback=...)`
adds a tool; `registry.tools(fmt)` is the request's tools list in any wire format
(toolkit.wire); `check_arguments` checks a call's decoded arguments against the
tool's schema (jsonschema, loaded on first use) and says in Chinese what is wrong.

A schema's `pattern` and `patternProperties` are applied to what the model sent,
so they see untrusted text: jsonschema would apply them with Python's `re`, whose
backtracking takes exponential time on a pattern like `^(a+)+$` (and the tool's
author, or an MCP server, wrote the pattern). Here they are applied by
toolkit.patterns (an automaton over Python's own parse of the pattern: time
linear in the text), to strings of at most PATTERN_MAX_CHARS characters (a
longer one is refused with the reason). A pattern no linear-time engine can run
(backreferences, lookaround, atomic groups, possessive repeats, conditionals)
makes the call BAD_TOOL_SCHEMA, saying why.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from . import wording
from .fitting import ToolKind
from .patterns import PATTERN_MAX_CHARS, UnsupportedPattern, matches
from .results import FATAL, ErrorCode, ErrorInfo, safe_str
from .wire import ToolCall, WireFormat, get_format

__all__ = ["Tool", "ToolRegistry", "schema_validator"]

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


def _validator_class(jsonschema: Any) -> Any:
    """Draft 2020-12 with `pattern`, `patternProperties` and `additionalProperties` (which reads the
    patterns too) applied by LinearPattern instead of re."""
    from jsonschema import _keywords
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if not validator.is_type(instance, "string"):
            return
        try:
            if not matches(patrn, instance):
                yield ValidationError(f"{safe_str(instance, 80)!r} 不符合格式 {safe_str(patrn, 80)!r}")
        except UnsupportedPattern:
            raise
        except ValueError as exc:
            yield ValidationError(str(exc))

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                try:
                    hit = matches(patrn, key)
                except UnsupportedPattern:
                    raise
                except ValueError as exc:
                    yield ValidationError(f"参数名{exc}")
                    continue
                if hit:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterable[Any]:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            yield from _keywords.additionalProperties(validator, allowed, instance, schema)
            return
        known = schema.get("properties", {})
        extras = [key for key in instance if key not in known
                  and not any(len(key) <= PATTERN_MAX_CHARS and matches(p, key) for p in patterns)]
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            yield ValidationError(f"不允许的参数名：{safe_str(', '.join(map(repr, sorted(extras))), 200)}")

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {
        "pattern": pattern, "patternProperties": pattern_properties, "additionalProperties": additional_properties})


def _jsonschema() -> Any:
    """jsonschema, imported on first use (importing toolkit stays fast).

    jsonschema's optional IRI format checker imports rfc3987_syntax, which builds a
    grammar at import time (about 1 s). Argument checking never checks formats, so
    that module is hidden while jsonschema is first imported, and only then.
    """
    hide = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
    if hide:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # makes its import fail fast
    try:
        import jsonschema
    finally:
        if hide:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


_VALIDATOR: Any = None  # the validator class (_validator_class), built on first use


def _keys(value: Any, depth: int = 0) -> Iterable[str]:
    """Every dict key inside a schema, at any depth (bounded)."""
    if depth > 60:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _keys(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item, depth + 1)


def schema_validator(schema: Any) -> Any:
    """A jsonschema Draft 2020-12 validator for `schema` whose patterns run in linear time (toolkit.patterns).

    Raises UnsupportedPattern for a schema that uses unevaluatedProperties
    together with patternProperties (jsonschema would apply those patterns with
    re, out of reach of the linear matcher)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = _validator_class(_jsonschema())
    used = set(_keys(schema))
    if {"unevaluatedProperties", "patternProperties"} <= used:
        raise UnsupportedPattern("schema 同时用了 unevaluatedProperties 和 patternProperties，"
                                 "其中的 pattern 无法在线性时间内检查；请改用 additionalProperties")
    return _VALIDATOR(schema)


class ToolRegistry:
    """The tools a model may call, their JSON schemas, and argument checking."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, tuple[Tool, Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        if not tool.name or not isinstance(tool.name, str):
            raise ValueError(f"a tool needs a non-empty name, got {tool.name!r}")
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
            doc = (inspect.getdoc(f) or "").strip()
            self.add(Tool(name or f.__name__, f, description or doc or (name or f.__name__),
                          parameters or _schema_from_signature(f), kind, writes, fallback, needs_approval))
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
            errors = sorted(self._validator(tool).iter_errors(arguments), key=lambda e: list(e.path))
        except Exception as exc:  # a broken schema is the tool author's bug: say so
            return None, ErrorInfo(FATAL, ErrorCode.BAD_TOOL_SCHEMA, wording.bad_tool_schema(tool.name, safe_str(exc, 200)))
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.path) or "(顶层)"
            return None, ErrorInfo(FATAL, ErrorCode.INVALID_ARGUMENTS,
                                   wording.arguments_invalid(tool.name, where, safe_str(err.message, 200)))
        return arguments, None
