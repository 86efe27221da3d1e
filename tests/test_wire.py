"""Wire formats as values: one WireFormat per API for tool schemas, results and calls (issue 8.5, 9.6)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from openai.types.chat import ChatCompletionMessageToolCall
from openai.types.responses import ResponseFunctionToolCall

from toolkit import FORMATS, Tool, ToolRegistry, ToolResult, format_tool_message, parse_tool_call
from toolkit.wire import ToolCall, field_of, make_call, register_format
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
    assert set(FORMATS) >= {"openai_chat", "openai_responses", "anthropic"}
    for fmt in FORMATS.values():
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
