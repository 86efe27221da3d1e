"""Tools over MCP: a real stdio server (python -m toolkit.mcp.server --demo) and the SDK's own types, no mocks.

The server is a subprocess started by the client; the tests list its tools, call each one through the
ToolExecutor, read its error results, kill it mid-call, let it hang past the time limit, check
structuredContent against outputSchema, validate the "mcp" wire format with the SDK's pydantic types and
let the offline model answer a sales question through it.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from pathlib import Path

import mcp.types as types
import pytest

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.agent import run_agent
from toolkit.messages import format_tool_message
from toolkit.mcp import INVALID_STRUCTURED_CONTENT, MCPServer, envelope_from_result
from toolkit.mcp.results import APPROVAL_META
from toolkit.results import unwrap_envelope
from toolkit.tools import analyze_sales_csv, default_registry, get_weather, search_flights
from toolkit.wire import ToolCall, parse_tool_call


@pytest.fixture(scope="module")
def server():
    with MCPServer(extra_args=["--demo"], call_timeout=5.0) as running:
        yield running


def run(executor: ToolExecutor, name: str, arguments: dict | None = None):
    with use_clock(SimulatedClock(seed=0)):  # retry waits are simulated; the MCP time limit is real seconds
        return asyncio.run(executor.run_tool_call(ToolCall("call_1", name, arguments or {})))


def executor_for(server: MCPServer, max_retries: int = 0) -> ToolExecutor:
    return ToolExecutor(registry=server.registry(), max_retries=max_retries)


# --- the tools as the server lists them ---------------------------------------------------------

def test_the_server_lists_the_course_tools_with_their_schemas(server):
    listed = {tool.name: tool for tool in server.list_tools()}
    local = default_registry()
    for tool in local:
        assert listed[tool.name].input_schema == tool.parameters
        assert listed[tool.name].description == tool.description
        assert listed[tool.name].annotations.read_only_hint is True
    assert listed["analyze_sales_csv"].output_schema["required"] == ["total_sales", "category_sales",
                                                                   "highest_category"]
    registry = server.registry()
    assert registry.get("analyze_sales_csv").kind == "read" and registry.get("get_weather").kind == "query"
    assert not registry.get("search_flights").writes
    assert registry.tools() == [t.schema() for t in registry]  # offered to the model like local tools
    assert registry.get("get_weather").parameters == local.get("get_weather").parameters


@pytest.mark.parametrize("name, arguments, direct", [
    ("analyze_sales_csv", {}, lambda: analyze_sales_csv()),
    ("get_weather", {"city": "上海"}, lambda: get_weather("上海")),
    ("search_flights", {"origin": "北京", "destination": "上海", "date": "明天"},
     lambda: search_flights("北京", "上海", "明天")),
])
def test_each_course_tool_over_mcp_gives_the_local_tools_data(server, name, arguments, direct):
    result = run(executor_for(server), name, arguments)
    assert result.status == "success", result.error
    assert result.artifact == unwrap_envelope(direct())[0]
    assert result.source == {"mcp_server": "mcp", "tool": name}


# --- error results: isError into the toolkit's kinds -----------------------------------------------

def test_a_tools_own_error_is_fatal_with_its_code(server):
    result = run(executor_for(server, max_retries=3), "analyze_sales_csv", {"path": "missing.csv"})
    assert (result.status, result.error_type, result.error_code, result.attempts) == \
        ("error", "fatal", "FILE_NOT_FOUND", 1)
    assert "missing.csv" in result.error


def test_a_retryable_error_result_is_retried_and_an_unmarked_one_is_not(server):
    retried = run(executor_for(server, max_retries=2), "report_failure", {"code": "UNAVAILABLE", "retryable": True})
    assert (retried.error_type, retried.error_code, retried.attempts) == ("retryable", "UNAVAILABLE", 3)
    plain = run(executor_for(server, max_retries=2), "report_failure", {"with_code": False})
    assert (plain.error_type, plain.error_code, plain.attempts) == ("fatal", "TOOL_ERROR", 1)
    assert "服务暂时不可用" in plain.error


# --- structuredContent against outputSchema ----------------------------------------------------------

def test_structured_content_that_matches_its_output_schema_is_the_data(server):
    result = run(executor_for(server), "sales_total")
    assert result.status == "success" and result.data == {"total_sales": 9692}


def test_structured_content_that_breaks_its_output_schema_is_a_fatal_error(server):
    result = run(executor_for(server, max_retries=3), "sales_total", {"broken": True})
    assert (result.status, result.error_type, result.error_code, result.attempts) == \
        ("error", "fatal", INVALID_STRUCTURED_CONTENT, 1)
    assert "total_sales" in result.error and result.data is None


def test_a_servers_output_schema_patterns_are_applied_in_linear_time():
    """A server writes its outputSchema and its structuredContent: both untrusted, so its patterns run on the
    toolkit's linear matcher, like a tool's argument schema's (a backreference is refused with the reason;
    ^(a+)+$ on forty a's and a '!' backtracks for hours under Python's re)."""
    backreference = {"type": "object", "properties": {"s": {"type": "string", "pattern": "(a)\\1"}}}
    result = types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={"s": "aa"})
    envelope = envelope_from_result(result, backreference)
    assert envelope["status"] == "error" and "反向引用" in envelope["error"]["message"], envelope
    nested = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    result = types.CallToolResult(content=[types.TextContent(type="text", text="{}")],
                                  structured_content={"s": "a" * 40 + "!"})
    envelope = envelope_from_result(result, nested)
    assert envelope["status"] == "error" and "不符合格式" in envelope["error"]["message"], envelope


def test_envelope_from_sdk_results():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ok = types.CallToolResult(content=[types.TextContent(type="text", text='{"n": 1}')], structured_content={"n": 1})
    assert envelope_from_result(ok, schema)["data"] == {"n": 1}
    missing = types.CallToolResult(content=[types.TextContent(type="text", text='{"n": 1}')])
    assert envelope_from_result(missing, schema)["error"]["code"] == INVALID_STRUCTURED_CONTENT
    assert envelope_from_result(missing)["data"] == {"n": 1}  # no schema: the JSON text is the data
    marked = types.CallToolResult(content=[types.TextContent(type="text", text="限流")], is_error=True,
                                  _meta={"toolresultlab/error": {"code": "RATE_LIMITED", "retryable": True}})
    assert unwrap_envelope(envelope_from_result(marked))[2].retryable
    assert not unwrap_envelope(envelope_from_result(marked.model_copy(update={"meta": None})))[2].retryable


# --- content blocks ---------------------------------------------------------------------------------

def test_image_and_resource_blocks_reach_the_model_described_not_as_base64(server):
    result = run(executor_for(server), "sales_chart")
    text, image, resource = result.data
    assert text == "各类别销售额柱状图"
    assert image["type"] == "image" and image["mime_type"] == "image/png" and image["bytes"] == 71
    assert "iVBOR" not in json.dumps(result.data)  # the PNG's base64 never goes to the model
    assert resource["uri"] == "file:///data/input/sales.csv" and resource["text"].startswith("category,")


# --- a server that dies or hangs ---------------------------------------------------------------------

def test_a_server_killed_mid_call_is_a_clean_error_and_the_next_call_restarts_it():
    with MCPServer(extra_args=["--demo"], call_timeout=10.0) as server:
        executor = executor_for(server)
        pid = run(executor, "server_pid").data["pid"]
        starts = server.starts
        threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
        killed = run(executor, "wait_seconds", {"seconds": 30})  # CONNECTION: not the 10 s TIMEOUT, nor 30 s later
        assert (killed.status, killed.error_type, killed.error_code) == ("error", "retryable", "CONNECTION")
        again = run(executor, "server_pid")
        assert again.status == "success" and again.data["pid"] != pid and server.starts == starts + 1


def test_a_server_that_exits_by_itself_mid_call_is_a_clean_error(server):
    result = run(executor_for(server), "exit_now")
    assert (result.status, result.error_type, result.error_code) == ("error", "retryable", "CONNECTION")
    assert run(executor_for(server), "get_weather", {"city": "北京"}).status == "success"


@pytest.mark.parametrize("limits", [{"call_timeout": 0.5}, {"timeouts": {"wait_seconds": 0.5}}],
                         ids=["every-call", "one-tool"])
def test_a_hanging_server_meets_the_time_limit_and_is_restarted(limits):
    with MCPServer(extra_args=["--demo"], **limits) as server:  # without the limit the call would return in 60 s
        executor = executor_for(server)
        hung = run(executor, "wait_seconds", {"seconds": 60})
        assert (hung.status, hung.error_type, hung.error_code) == ("error", "retryable", "TIMEOUT")
        assert "0.5 秒内没有返回" in hung.error and not server.running
        assert run(executor, "wait_seconds", {"seconds": 0}).status == "success" and server.starts == 2


@pytest.mark.parametrize("bad", [{"call_timeout": 0}, {"timeouts": {"wait_seconds": -1}}, {"start_timeout": "5"},
                                 {"timeouts": {"wait_seconds": True}}])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(bad):
    with pytest.raises(ValueError, match="时间上限"):
        MCPServer(**bad)


def test_a_server_that_cannot_start_is_an_error_result_not_an_exception():
    with MCPServer(command="/nonexistent/python", start_timeout=5.0) as server:
        envelope = server.call_sync("analyze_sales_csv")
    assert envelope["status"] == "error" and envelope["error"]["code"] == "CONNECTION" and envelope["retryable"]


# --- MCP as a wire format, checked with the SDK's own types --------------------------------------------

def on_the_wire(model: type, raw: dict):
    """`raw` validated by the SDK's type and equal to what the SDK itself writes on the wire (camelCase aliases,
    mode="json"): the SDK's models also accept field names (is_error, input_schema), which no MCP peer reads."""
    parsed = model.model_validate(raw)
    written = parsed.model_dump(by_alias=True, mode="json", exclude_unset=True)
    assert raw == written, f"not {model.__name__} as MCP writes it: {sorted(raw)} vs {sorted(written)}"
    return parsed


def test_the_mcp_wire_format_validates_against_the_sdks_types_by_its_wire_keys():
    for entry in default_registry().tools("mcp"):
        on_the_wire(types.Tool, entry)
        assert "inputSchema" in entry
    ok = format_tool_message("analyze_sales_csv", "call_7", analyze_sales_csv(), fmt="mcp")
    response = on_the_wire(types.JSONRPCResponse, ok)
    result = on_the_wire(types.CallToolResult, ok["result"])
    assert response.id == "call_7" and result.is_error is False and ok["result"]["isError"] is False
    assert result.structured_content["status"] == "success" and "structuredContent" in ok["result"]
    assert json.loads(result.content[0].text) == result.structured_content
    failed = format_tool_message("analyze_sales_csv", "call_8", analyze_sales_csv("missing.csv"), fmt="mcp")
    assert on_the_wire(types.CallToolResult, failed["result"]).is_error is True


@pytest.mark.parametrize("model, raw", [
    (types.Tool, {"name": "get_weather", "description": "天气", "input_schema": {"type": "object"}}),
    (types.CallToolResult, {"content": [{"type": "text", "text": "{}"}], "is_error": False}),
    (types.CallToolResult, {"content": [], "isError": False, "structured_content": {"a": 1}}),
])
def test_snake_case_keys_the_sdk_would_accept_are_not_the_wire_format(model, raw):
    model.model_validate(raw)  # the SDK's types take field names too (populate_by_name) ...
    with pytest.raises(AssertionError, match="as MCP writes it"):
        on_the_wire(model, raw)  # ... but MCP peers read the camelCase keys only


def test_the_mcp_wire_format_reads_a_tools_call_request():
    request = types.JSONRPCRequest(jsonrpc="2.0", id="req-3", method="tools/call",
                                   params={"name": "get_weather", "arguments": {"city": "上海"}})
    raw = request.model_dump(by_alias=True, exclude_none=True)
    types.CallToolRequest.model_validate(raw)
    for call in (parse_tool_call(raw), parse_tool_call(raw, fmt="mcp")):  # found by looks_like, or named
        assert (call.id, call.name, call.parsed) == ("req-3", "get_weather", {"city": "上海"})


# --- the agent over MCP ------------------------------------------------------------------------------

def test_the_offline_model_answers_a_sales_question_through_mcp_tools(server):
    question = "哪个类别的销售额最高？总销售额是多少？"
    with use_clock(SimulatedClock(seed=0)):
        over_mcp = run_agent(question, registry=server.registry())
        local = run_agent(question, registry=default_registry())
    assert over_mcp.stopped == "answered"
    assert [(r.name, r.status, r.source) for r in over_mcp.tool_results] == \
        [("analyze_sales_csv", "success", {"mcp_server": "mcp", "tool": "analyze_sales_csv"})]
    assert "显示器" in over_mcp.answer and "9692" in over_mcp.answer
    assert over_mcp.answer == local.answer


def test_calls_that_arrive_together_start_the_server_once():
    with MCPServer(extra_args=["--demo"]) as server:
        async def together():
            return await asyncio.gather(*(server.call("server_pid") for _ in range(4)))
        envelopes = asyncio.run(together())
        assert server.starts == 1 and len({e["data"]["pid"] for e in envelopes}) == 1


def test_the_server_checks_arguments_against_the_schema_it_listed(server):
    envelope = server.call_sync("get_weather", {"city": 3})  # past the client's registry: the server refuses too
    assert envelope["error"]["code"] == "INVALID_ARGUMENTS" and envelope["retryable"] is False
    assert server.call_sync("no_such_tool")["error"]["code"] == "UNKNOWN_TOOL"


def test_a_json_rpc_error_is_the_servers_failure_and_the_server_stays_up(server):
    starts = server.starts
    result = run(executor_for(server), "handler_raises")
    assert (result.status, result.error_type, result.error_code) == ("error", "retryable", "SERVER_ERROR")
    assert "演示：处理函数出错" in result.error
    assert run(executor_for(server), "server_pid").status == "success" and server.starts == starts


# --- a write over MCP waits for a person's yes ---------------------------------------------------------

def test_a_write_the_course_marks_needs_approval_over_mcp_too(server):
    listed = {tool.name: tool.meta or {} for tool in server.list_tools()}
    assert listed["send_notice"][APPROVAL_META] is True and listed["get_weather"][APPROVAL_META] is False
    registry = server.registry()
    assert registry.get("send_notice").needs_approval and registry.get("send_notice").writes
    assert not any(registry.get(n).needs_approval for n in default_registry().names)
    assert server.registry(needs_approval="get_weather").get("get_weather").needs_approval
    assert not server.registry(needs_approval=()).get("send_notice").needs_approval  # the caller's choice, said
    assert server.registry(["get_weather", "send_notice"]).names == ["get_weather", "send_notice"]
    for bad in ({"names": ["no_such_tool"]}, {"needs_approval": "no_such_tool"}):
        with pytest.raises(ValueError, match="no_such_tool"):
            server.registry(**bad)


def test_a_write_tool_of_a_server_that_says_nothing_needs_approval(monkeypatch):
    """Someone else's server: no toolresultlab mark, and a tool not annotated readOnlyHint may write."""
    quiet = MCPServer()
    listed = [types.Tool(name="delete_file", input_schema={"type": "object"}),
              types.Tool(name="read_file", input_schema={"type": "object"},
                         annotations=types.ToolAnnotations(read_only_hint=True))]
    monkeypatch.setattr(quiet, "list_tools", lambda: listed)
    registry = quiet.registry()
    assert registry.get("delete_file").needs_approval and not registry.get("read_file").needs_approval


def test_the_agent_pauses_before_a_write_served_over_mcp(server):
    from toolkit.agent import resume
    from toolkit.tools.orders import orders_registry

    executor = ToolExecutor(result_max_chars=1200)
    registry = orders_registry(executor)
    registry.add(server.registry(["send_notice"]).get("send_notice"))  # the write comes from the server
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("提醒客户003 他 4 月已支付的订单已付款成功", registry=registry, executor=executor, max_turns=20)
        assert run.stopped == "needs_approval" and run.pending.tool == "send_notice"
        assert run.pending.arguments["customer"] == "客户003"
        run = resume(run, True)
    sent = [r for r in run.tool_results if r.name == "send_notice"]
    assert run.ok and sent[0].ok and sent[0].source == {"mcp_server": "mcp", "tool": "send_notice"}


# --- what an untrusted server may send: nothing raises, nothing waits past the call's limit ------------------

UNTRUSTED = Path(__file__).with_name("mcp_untrusted_server.py")
LIMIT = 3.0


@pytest.fixture(scope="module")
def untrusted():
    with MCPServer(args=[str(UNTRUSTED)], call_timeout=LIMIT) as running:
        running.list_tools()  # started before any call is timed
        yield running


def returns_within(seconds: float, fn):
    """(fn()'s value, the real seconds it took), or a failure when it has not returned in `seconds` (the check it
    stands for ran for minutes to hours; its thread is left to finish on its own)."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    began = time.monotonic()
    worker.start()
    worker.join(seconds)
    assert box, f"did not return within {seconds} s"
    return box[0], time.monotonic() - began


def test_json_nested_200000_deep_in_a_text_block_is_text_not_an_exception(untrusted):
    envelope = untrusted.call_sync("deep_json")  # raised RecursionError into the caller
    assert envelope["status"] == "ok" and isinstance(envelope["data"], str)
    result = run(ToolExecutor(registry=untrusted.registry(["deep_json"]), max_retries=0), "deep_json")
    assert result.status == "success" and result.truncated and isinstance(result.data, str)


def test_unique_items_over_4000_objects_is_checked_in_linear_time(untrusted):
    """jsonschema compares every pair of items: 4,000 objects took 54 s, long after the call's limit."""
    envelope, took = returns_within(30, lambda: untrusted.call_sync("unique_objects"))
    assert envelope["status"] == "ok" and len(envelope["data"]["items"]) == 4000 and took < LIMIT


def test_an_output_schema_that_explodes_is_stopped_within_the_calls_limit(untrusted):
    envelope, took = returns_within(30, lambda: untrusted.call_sync("explosive"))
    assert envelope["status"] == "error" and envelope["error"]["code"] == INVALID_STRUCTURED_CONTENT
    assert "没能在" in envelope["error"]["message"] and took < LIMIT + 2


def test_an_input_schema_that_explodes_is_stopped_before_the_call(untrusted):
    executor = ToolExecutor(registry=untrusted.registry(["slow_arguments"]), max_retries=0)
    result, took = returns_within(30, lambda: run(executor, "slow_arguments", {}))
    assert (result.status, result.error_code) == ("error", "BAD_TOOL_SCHEMA") and "没能在" in result.error
    assert took < LIMIT


@pytest.mark.parametrize("items, unique", [
    ([{"a": 1}, {"a": 1.0}], False), ([1, True], True), ([[1, {"b": [2]}], [1, {"b": [2]}]], False),
    ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False), ([0, False, None, "", [], {}], True), (["1", 1], True),
])
def test_unique_items_counts_equal_what_json_schema_counts_equal(items, unique):
    from toolkit.schemas import schema_problem, schema_validator

    problem = schema_problem(schema_validator({"type": "array", "uniqueItems": True}), items, 1.0)
    assert (problem is None) == unique
