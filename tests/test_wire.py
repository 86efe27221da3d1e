"""Wire formats as values: one WireFormat per API for tool schemas, results and calls (issue 8.5, 9.6)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from openai.types.chat import ChatCompletionMessageToolCall
from openai.types.responses import ResponseFunctionToolCall

from toolkit import FORMATS, Tool, ToolRegistry, ToolResult, format_tool_message, parse_tool_call
from toolkit.wire import BUILT_IN, ToolCall, field_of, make_call, register_format
from toolkit.wire import WireFormat

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


# --- 9.6: the Responses API's two ids -----------------------------------------------------------------------------

RESPONSES_SHAPES = [
    pytest.param({"type": "function_call", "id": "fc_123", "call_id": "call_abc", "name": "w", "arguments": "{}"},
                 id="dict-with-both-ids"),
    pytest.param({"id": "fc_123", "call_id": "call_abc", "name": "w", "arguments": "{}"}, id="dict-without-type"),
    pytest.param({"type": "function_call", "call_id": "call_abc", "name": "w", "arguments": "{}"}, id="dict-no-item-id"),
    pytest.param(ResponseFunctionToolCall(id="fc_123", call_id="call_abc", name="w", arguments="{}",
                                          type="function_call", status="completed"), id="openai-sdk-item"),
    pytest.param(ResponseFunctionToolCall(call_id="call_abc", name="w", arguments="{}", type="function_call"),
                 id="openai-sdk-item-without-id"),
    pytest.param(SimpleNamespace(type="function_call", id="fc_123", call_id="call_abc", name="w", arguments="{}"),
                 id="sdk-like-object"),
]


@pytest.mark.parametrize("item", RESPONSES_SHAPES)
def test_a_responses_call_is_answered_with_its_call_id_not_the_item_id(item):
    call = parse_tool_call(item)
    assert call == ToolCall("call_abc", "w", "{}")
    message = format_tool_message(call.name, call.id, ToolResult("w", "晴"), fmt="openai_responses")
    assert message["call_id"] == "call_abc" and message["type"] == "function_call_output"


@pytest.mark.parametrize("item", RESPONSES_SHAPES)
def test_the_responses_reader_prefers_call_id_also_when_asked_by_name(item):
    assert parse_tool_call(item, fmt="openai_responses").id == "call_abc"


def test_chat_and_anthropic_calls_keep_their_own_ids():
    sdk = ChatCompletionMessageToolCall(id="call_1", type="function", function={"name": "w", "arguments": "{}"})
    assert parse_tool_call(sdk) == ToolCall("call_1", "w", "{}")
    block = SimpleNamespace(type="tool_use", id="toolu_1", name="w", input={"city": "上海"})
    assert parse_tool_call(block) == ToolCall("toolu_1", "w", {"city": "上海"})


def test_unknown_format_name_is_refused_with_the_known_names():
    with pytest.raises(ValueError, match="openai_responses"):
        parse_tool_call({}, fmt="nope")
    with pytest.raises(ValueError, match="anthropic"):
        ToolRegistry().tools("nope")


# --- one value per format, used everywhere -------------------------------------------------------------------------

def test_registry_offers_a_responses_tool_list():
    registry = ToolRegistry([Tool("weather", lambda city: city, "查天气", PARAMS)])
    assert registry.tools("openai_responses") == [{"type": "function", "name": "weather", "description": "查天气",
                                           "parameters": PARAMS, "strict": False}]
    assert registry.tools("openai_chat") == registry.openai_tools()
    assert registry.get("weather").schema("anthropic") == registry.tools("anthropic")[0]


def test_each_built_in_format_is_one_value_with_three_shapes():
    assert set(BUILT_IN) == {"openai_chat", "openai_responses", "anthropic"} and set(FORMATS) >= set(BUILT_IN)
    for fmt in BUILT_IN.values():  # a registered one ("mcp" once toolkit.mcp is imported) has shapes of its own
        assert isinstance(fmt, WireFormat)
        message = format_tool_message("t", "id_1", ToolResult("t", "ok"), fmt=fmt.name)
        assert message == fmt.result_message("id_1", message.get("content", message.get("output")), False)


@pytest.fixture
def gemini_like():
    """A fourth format, added from this test file alone, removed afterwards."""
    fmt = WireFormat(
        "gemini_like",
        tool_schema=lambda name, description, parameters: {"function_declarations": [
            {"name": name, "description": description, "parameters": parameters}]},
        result_message=lambda call_id, content, is_error: {"functionResponse": {
            "id": call_id, "response": json.loads(content)}},
        parse_call=lambda raw: make_call(field_of(field_of(raw, "functionCall"), "id"),
                                         field_of(field_of(raw, "functionCall"), "name"),
                                         field_of(field_of(raw, "functionCall"), "args")),
        looks_like=lambda raw: field_of(raw, "functionCall") is not None,
    )
    register_format(fmt)
    yield fmt
    del FORMATS[fmt.name]


def test_a_fourth_format_is_one_registration(gemini_like):
    registry = ToolRegistry([Tool("weather", lambda city: city, "查天气", PARAMS)])
    assert registry.tools("gemini_like")[0]["function_declarations"][0]["name"] == "weather"
    raw = {"functionCall": {"id": "g1", "name": "weather", "args": {"city": "上海"}}}
    assert parse_tool_call(raw) == ToolCall("g1", "weather", {"city": "上海"})  # found without being named
    message = format_tool_message("weather", "g1", ToolResult("weather", "晴"), fmt="gemini_like")
    assert message["functionResponse"]["id"] == "g1"
    assert message["functionResponse"]["response"]["status"] == "success"


def test_the_executor_runs_a_call_in_a_registered_format(gemini_like, sim_clock):
    import asyncio

    from toolkit import ToolExecutor
    registry = ToolRegistry([Tool("weather", lambda city: f"{city}：晴", "查天气", PARAMS)])
    raw = {"functionCall": {"id": "g2", "name": "weather", "args": {"city": "上海"}}}
    result = asyncio.run(ToolExecutor(registry=registry).run_tool_call(raw))
    assert result.ok and result.data == "上海：晴" and result.call_id == "g2"


def test_no_if_chain_on_format_names_outside_the_wire_module():
    import inspect
    import re

    import toolkit.executor
    import toolkit.messages
    import toolkit.registry
    for module in (toolkit.executor, toolkit.messages, toolkit.registry):
        assert not re.search(r"""==\\s*["'](openai_chat|openai_responses|anthropic)["']""", inspect.getsource(module))


# --- registering a format: built-ins are not replaced by accident, broken formats are refused ------------------------

def _format(name: str = "my_format", **parts) -> WireFormat:
    base = dict(tool_schema=lambda name, description, parameters: {"name": name},
                result_message=lambda call_id, content, is_error: {"id": call_id, "content": content},
                parse_call=lambda raw: make_call(field_of(raw, "id"), field_of(raw, "name"), None),
                looks_like=lambda raw: field_of(raw, "my_format") is not None)
    return WireFormat(name, **{**base, **parts})


@pytest.fixture
def restore_formats():
    saved = dict(FORMATS)
    yield
    FORMATS.clear()
    FORMATS.update(saved)


@pytest.mark.parametrize("name", ["openai_chat", "openai_responses", "anthropic"])
def test_a_built_in_format_is_not_replaced_without_replace_true(name, restore_formats):
    original = FORMATS[name]
    with pytest.raises(ValueError, match="replace=True"):
        register_format(_format(name))
    assert FORMATS[name] is original
    message = format_tool_message("t", "call_1", ToolResult("t", "ok"), fmt=name)
    assert message == original.result_message("call_1", message.get("content", message.get("output")), False)


def test_replace_true_replaces_a_built_in_and_the_original_can_be_put_back(restore_formats):
    from toolkit.wire import CHAT_COMPLETIONS
    register_format(_format("openai_chat"), replace=True)
    assert format_tool_message("t", "call_1", ToolResult("t", "ok"))["id"] == "call_1"
    register_format(CHAT_COMPLETIONS)  # the toolkit's own object puts the built-in back
    assert format_tool_message("t", "call_1", ToolResult("t", "ok"))["role"] == "tool"


def test_registering_the_same_name_again_replaces_a_format_of_ones_own(restore_formats):
    register_format(_format())
    second = register_format(_format(result_message=lambda call_id, content, is_error: {"v": 2}))
    assert FORMATS["my_format"] is second  # a notebook cell run twice


def _raises(*args):
    raise KeyError("content")


@pytest.mark.parametrize("part, broken", [
    ("tool_schema", _raises), ("result_message", _raises), ("parse_call", _raises), ("looks_like", _raises),
    ("tool_schema", lambda *a: "not a dict"), ("result_message", lambda *a: ["not", "a", "dict"]),
    ("parse_call", lambda raw: ("id", "name", "{}")), ("result_message", "not callable"),
])
def test_a_format_whose_function_fails_on_a_sample_is_refused_at_registration(part, broken, restore_formats):
    with pytest.raises(ValueError, match=part) as caught:
        register_format(_format(**{part: broken}))
    assert "my_format" in str(caught.value) and "my_format" not in FORMATS


@pytest.mark.parametrize("value", [None, "openai_chat", _format(""), {"name": "x"}])
def test_register_format_refuses_what_is_not_a_named_format(value):
    with pytest.raises(ValueError, match="WireFormat"):
        register_format(value)


def _fails_on_errors(call_id, content, is_error):
    if json.loads(content)["status"] == "error" and not is_error:
        raise KeyError("result")
    return {"id": call_id, "content": content, "is_error": is_error}


def _fails_on_long_content(call_id, content, is_error):
    if len(content) > 1000:
        raise RecursionError("too deep for this format")
    return {"id": call_id, "content": content, "is_error": is_error}


def _returns_a_list_for_some_ids(call_id, content, is_error):
    return [call_id] if call_id == "call_9" and not is_error else {"id": call_id, "content": content,
                                                                    "is_error": is_error}


@pytest.mark.parametrize("result_message, data", [  # data, not ToolResults: no module-level ToolResult stays alive
    (_fails_on_long_content, "很长的结果" * 400),
    (_returns_a_list_for_some_ids, "ok"),
])
def test_a_format_that_fails_on_one_result_gives_an_error_result_in_its_own_shape(result_message, data,
                                                                                  restore_formats):
    from toolkit.readback import read_tool_content
    fmt = register_format(_format(result_message=result_message))
    message = format_tool_message("t", "call_9", ToolResult("t", data), fmt=fmt.name)
    assert message["id"] == "call_9" and message["is_error"] is True
    reading = read_tool_content(message["content"])
    assert reading.failed and reading.error_code == "PLUGIN_ERROR" and "my_format" in reading.error


def test_a_format_that_fails_even_on_the_error_result_raises_a_clear_value_error():
    def always(call_id, content, is_error):
        raise RuntimeError("broken")
    unregistered = _format("passed_directly", result_message=always)  # never tried out by register_format
    with pytest.raises(ValueError, match="passed_directly.*RuntimeError"):
        format_tool_message("t", "call_1", ToolResult("t", "ok"), fmt=unregistered)
