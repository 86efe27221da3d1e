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

from .guard import PluginError, run_plugin
from .redaction import safe_str

__all__ = ["WireFormat", "FORMATS", "BUILT_IN", "ToolCall", "register_format", "get_format", "parse_tool_call",
           "wrap_result", "CHAT_COMPLETIONS", "RESPONSES", "ANTHROPIC"]


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
    """obj[key] for a dict, obj.key for an SDK object; None when missing."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def make_call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    """A ToolCall from raw fields: id and name as bounded, redacted text; missing ones empty."""
    return ToolCall(None if call_id is None else safe_str(call_id, 200),
                    "" if name is None else safe_str(name, 200), arguments)


@dataclass(frozen=True)
class WireFormat:
    """One model API's shapes.

    tool_schema(name, description, parameters) -> one entry of the request's tools list.
    result_message(call_id, content, is_error) -> the message or block carrying a result.
    parse_call(raw) -> ToolCall; missing fields come back empty.
    looks_like(raw) -> whether a raw tool call is in this format (for parse_tool_call
    without a format).
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

FORMATS: dict[str, WireFormat] = {fmt.name: fmt for fmt in (CHAT_COMPLETIONS, RESPONSES, ANTHROPIC)}
BUILT_IN: dict[str, WireFormat] = dict(FORMATS)  # name -> the toolkit's own format

# what a format's functions are tried on when it is registered
_SAMPLE_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
_SAMPLE_CONTENT = json.dumps({"status": "success", "result": "晴", "error": None, "error_type": None,
                              "execution_time_ms": 0.0}, ensure_ascii=False)
_SAMPLE_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
FORMAT_FAILED = "消息格式 {name} 无法包装这次的工具结果（{why}），结果没有送达；不要编造结果，可以告诉用户出了什么问题"


def _error_content(name: str, why: str) -> str:
    """The error result wrap_result hands a format whose result_message failed on the real one."""
    text = FORMAT_FAILED.format(name=safe_str(name, 80), why=why)
    return json.dumps({"status": "error", "result": None, "error": text, "error_type": "fatal",
                       "execution_time_ms": 0.0, "error_code": "PLUGIN_ERROR"}, ensure_ascii=False)


def _try_out(fmt: WireFormat) -> None:
    """Call each of the format's functions once on a sample; ValueError (Chinese) naming the one that fails."""
    error_sample = _error_content(fmt.name, "示例")  # what wrap_result falls back to: it must work too
    trials = (("tool_schema", lambda: fmt.tool_schema("get_weather", "查天气", _SAMPLE_PARAMETERS), dict),
              ("result_message", lambda: fmt.result_message("call_1", _SAMPLE_CONTENT, False), dict),
              ("result_message", lambda: fmt.result_message("toolu_01Xy9", error_sample, True), dict),
              ("parse_call", lambda: fmt.parse_call(_SAMPLE_CALL), ToolCall),
              ("looks_like", lambda: fmt.looks_like(_SAMPLE_CALL), object))
    for part, trial, wanted in trials:
        if not callable(getattr(fmt, part)):
            raise ValueError(f"消息格式 {fmt.name!r} 的 {part} 应是函数，实际是 {type(getattr(fmt, part)).__name__}")
        try:
            value = run_plugin(part, trial)
        except PluginError as failed:
            raise ValueError(f"消息格式 {fmt.name!r} 的 {part} 在示例数据上出错（{failed.detail}），没有注册；"
                             "先单独调用它试一试") from None
        if not isinstance(value, wanted):
            raise ValueError(f"消息格式 {fmt.name!r} 的 {part} 应返回 {wanted.__name__}，"
                             f"实际返回了 {type(value).__name__}，没有注册")


def register_format(fmt: WireFormat, *, replace: bool = False) -> WireFormat:
    """Add a wire format under `fmt.name` for the whole process; returns it.

    Each of its four functions is tried on a sample (a tool schema, a success
    result and the error result wrap_result falls back to, a Chat Completions
    call): one that raises or returns the wrong type is refused with a
    ValueError naming it, so a broken format fails here, not in the middle of a
    run. A built-in name ("openai_chat", "openai_responses",
    "anthropic") is replaced only with replace=True (the toolkit's own format
    object, `BUILT_IN[name]`, puts it back); any other name may be registered
    again (re-running a notebook cell replaces the earlier version).
    Raises ValueError for anything that is not a named WireFormat.
    """
    if not isinstance(fmt, WireFormat) or not isinstance(fmt.name, str) or not fmt.name:
        raise ValueError(f"register_format 需要一个有名字的 WireFormat，实际收到 {safe_str(fmt, 120)}")
    if fmt.name in BUILT_IN and fmt is not BUILT_IN[fmt.name] and not replace:
        raise ValueError(f"{fmt.name!r} 是内置的消息格式，整个进程都在用它，不会被悄悄替换：换一个名字注册，"
                         f"或者确实要替换时写 register_format(fmt, replace=True)")
    _try_out(fmt)
    FORMATS[fmt.name] = fmt
    return fmt


def _message(fmt: WireFormat, call_id: str, content: str, is_error: bool) -> tuple[dict | None, str]:
    """(fmt.result_message(...) as a plain dict, "") or (None, why it failed)."""
    try:
        message = run_plugin("result_message", lambda: fmt.result_message(call_id, content, is_error))
    except PluginError as failed:
        return None, failed.detail
    if isinstance(message, dict):
        return dict(message), ""
    return None, f"result_message 返回了 {type(message).__name__}，不是 dict"


def wrap_result(fmt: WireFormat, call_id: str, content: str, is_error: bool) -> dict:
    """`fmt.result_message(call_id, content, is_error)`, where a format's own bug does not raise.

    A result_message that raises or returns something other than a dict is called again
    with an error content instead (status "error", error_code "PLUGIN_ERROR",
    the exception named): the model reads a failure in the API's own shape, the
    run goes on. When that fails too, a format registered under a built-in name
    (replace=True) falls back to the toolkit's own format of that name, whose
    shape the API expects; any other format raises ValueError (naming the
    format and both failures). register_format tried result_message on a
    success and on this error content, so only a format that fails on what it
    passed there (or one handed over without registering) gets that far.
    """
    message, why = _message(fmt, call_id, content, is_error)
    if message is not None:
        return message
    error = _error_content(fmt.name, why)
    message, again = _message(fmt, call_id, error, True)
    if message is not None:
        return message
    own = BUILT_IN.get(fmt.name) if isinstance(fmt.name, str) else None
    if own is not None and own is not fmt:
        return own.result_message(call_id, _error_content(fmt.name, f"{why}；再包装错误结果时 {again}"), True)
    raise ValueError(f"消息格式 {safe_str(fmt.name, 80)!r} 的 result_message 无法包装工具结果（{why}；"
                     f"再包装错误结果时 {again}），没有可以交给模型的消息：先单独调用它试一试，"
                     "用 register_format 注册时会先在示例上试用")


def get_format(fmt: "str | WireFormat") -> WireFormat:
    """The WireFormat named `fmt` (a WireFormat is returned as it is).

    Raises ValueError naming the known formats for an unknown name.
    """
    if isinstance(fmt, WireFormat):
        return fmt
    found = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if found is None:
        names = ", ".join(repr(n) for n in FORMATS)
        raise ValueError(f"fmt 只能是 {names} 之一（或一个 WireFormat），收到的是 {fmt!r}：请改成其中之一")
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
            if run_plugin(candidate.name, lambda fmt=candidate: fmt.looks_like(tool_call)):
                return run_plugin(candidate.name, lambda fmt=candidate: fmt.parse_call(tool_call))
        except PluginError:  # a registered format is a plug-in: one whose reader fails leaves the call to the next
            continue
    return _chat_call(tool_call)
