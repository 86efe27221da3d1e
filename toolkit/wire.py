"""Wire formats as values: what each model API calls a tool schema, a tool call and a tool result.

One `WireFormat` per API, all in `FORMATS`: Chat Completions ("openai_chat"),
the Responses API ("openai_responses") and Anthropic Messages ("anthropic").
Each holds three small functions: the entry for the request's `tools=[...]`,
the message (or block) that hands a result back, and how to read the model's
tool call. Tool.schema, ToolRegistry.tools, parse_tool_call and
format_tool_message all look the format up here, so a fourth API is one
`register_format(WireFormat(...))` and nothing else.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from .results import safe_str

__all__ = ["WireFormat", "FORMATS", "ToolCall", "register_format", "get_format", "parse_tool_call",
           "CHAT_COMPLETIONS", "RESPONSES", "ANTHROPIC"]


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call a tool, in any wire format, normalized.

    arguments: as the model sent them (JSON text, or an already-decoded dict).
    They are decoded once, when the ToolCall is made: `parsed` is the decoded
    value (a dict when the model did it right; {} for empty arguments), or None
    with `parse_error` saying why the text is not JSON. Everything downstream
    (the registry's schema check, the loop's repeat check) reads `parsed`.
    """

    id: str | None
    name: str
    arguments: Any
    parsed: Any = field(init=False, repr=False, compare=False)
    parse_error: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parsed, error = _decode(self.arguments)
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "parse_error", error)


def _decode(arguments: Any) -> tuple[Any, str | None]:
    """(decoded arguments, None) or (None, why they are not JSON); never raises."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    if not isinstance(arguments, str):
        return arguments, None
    try:
        return json.loads(arguments), None
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting 100,000 deep
        return None, safe_str(exc, 120)


def field_of(obj: Any, key: str) -> Any:
    """obj[key] for a dict, obj.key for an SDK object; None when missing. Never raises."""
    try:
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
    except Exception:  # a property that raises (a half-built SDK object): the field is missing
        return None


def make_call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    """A ToolCall from raw fields: id and name as bounded, redacted text; missing ones empty."""
    return ToolCall(None if call_id is None else safe_str(call_id, 200),
                    "" if name is None else safe_str(name, 200), arguments)


@dataclass(frozen=True)
class WireFormat:
    """One model API's shapes.

    tool_schema(name, description, parameters) -> one entry of the request's tools list.
    result_message(call_id, content, is_error) -> the message or block carrying a result.
    parse_call(raw) -> ToolCall; must never raise (missing fields come back empty).
    looks_like(raw) -> whether a raw tool call is in this format (for parse_tool_call
    without a format); must never raise.
    """

    name: str
    tool_schema: Callable[[str, str, dict], dict]
    result_message: Callable[[str, str, bool], dict]
    parse_call: Callable[[Any], ToolCall]
    looks_like: Callable[[Any], bool]


def _chat_call(raw: Any) -> ToolCall:
    function = field_of(raw, "function")
    source = function if function is not None else raw
    return make_call(field_of(raw, "id"), field_of(source, "name"), field_of(source, "arguments"))


def _responses_call(raw: Any) -> ToolCall:
    # A function_call item has two ids: `id` (fc_..., the output item) and `call_id` (call_...).
    # The function_call_output must answer call_id, or the API cannot match it to its call.
    call_id = field_of(raw, "call_id")
    return make_call(call_id if call_id is not None else field_of(raw, "id"), field_of(raw, "name"),
                     field_of(raw, "arguments"))


def _anthropic_call(raw: Any) -> ToolCall:
    call_id = field_of(raw, "id")
    return make_call(call_id if call_id is not None else field_of(raw, "tool_use_id"), field_of(raw, "name"),
                     field_of(raw, "input"))


CHAT_COMPLETIONS = WireFormat(
    "openai_chat",
    tool_schema=lambda name, description, parameters: {
        "type": "function", "function": {"name": name, "description": description, "parameters": parameters}},
    result_message=lambda call_id, content, is_error: {"role": "tool", "tool_call_id": call_id, "content": content},
    parse_call=_chat_call,
    looks_like=lambda raw: field_of(raw, "function") is not None,
)

RESPONSES = WireFormat(
    "openai_responses",
    tool_schema=lambda name, description, parameters: {
        "type": "function", "name": name, "description": description, "parameters": parameters, "strict": False},
    result_message=lambda call_id, content, is_error: {"type": "function_call_output", "call_id": call_id,
                                                       "output": content},
    parse_call=_responses_call,
    looks_like=lambda raw: field_of(raw, "type") == "function_call" or field_of(raw, "call_id") is not None,
)

ANTHROPIC = WireFormat(
    "anthropic",
    tool_schema=lambda name, description, parameters: {
        "name": name, "description": description, "input_schema": parameters},
    result_message=lambda call_id, content, is_error: {"type": "tool_result", "tool_use_id": call_id,
                                                       "content": content, "is_error": is_error},
    parse_call=_anthropic_call,
    looks_like=lambda raw: field_of(raw, "type") == "tool_use" or field_of(raw, "input") is not None,
)

FORMATS: dict[str, WireFormat] = {}


def register_format(fmt: WireFormat) -> WireFormat:
    """Add (or replace) a wire format under `fmt.name`; returns it."""
    if not isinstance(fmt, WireFormat) or not fmt.name:
        raise ValueError(f"register_format needs a WireFormat with a name, got {fmt!r}")
    FORMATS[fmt.name] = fmt
    return fmt


for _fmt in (CHAT_COMPLETIONS, RESPONSES, ANTHROPIC):
    register_format(_fmt)


def get_format(fmt: "str | WireFormat") -> WireFormat:
    """The WireFormat named `fmt` (a WireFormat is returned as it is).

    Raises ValueError naming the known formats for an unknown name.
    """
    if isinstance(fmt, WireFormat):
        return fmt
    found = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if found is None:
        names = ", ".join(repr(n) for n in FORMATS)
        raise ValueError(f"fmt must be one of {names}, got {fmt!r}")
    return found


def parse_tool_call(tool_call: Any, fmt: "str | WireFormat | None" = None) -> ToolCall:
    """Normalize a model's tool call: an openai SDK object, a Chat/Responses dict, an Anthropic block.

    With `fmt` that format's reader is used; without it the first format whose
    `looks_like` accepts the call, else Chat Completions' reader. Never raises
    for the call itself: whatever is missing comes back empty, to be refused later.
    Raises ValueError only for an unknown `fmt`.
    """
    if fmt is not None:
        return get_format(fmt).parse_call(tool_call)
    for candidate in FORMATS.values():
        try:
            if candidate.looks_like(tool_call):
                return candidate.parse_call(tool_call)
        except Exception:  # a registered format's reader that raises: try the next one
            continue
    return _chat_call(tool_call)
