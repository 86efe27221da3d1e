"""The agent loop over real HTTP: the openai SDK talks to a scripted model on 127.0.0.1.

The server records every request body, so the tests read exactly what the
model was sent: the assistant message with its tool_calls, then one role
"tool" message per tool_call_id, whose content is the toolkit's JSON.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

import openai
import pytest

from support import sdk_client
from toolkit import (FatalToolError, RetryableToolError, SimulatedClock, TaskContext, ToolExecutor, ToolRegistry,
                     split_task_context, use_clock)
from toolkit.llm import config as llm_config
from toolkit.llm import OFFLINE_MODEL, OfflineAPIError, OfflineServer, chat_completion, tool_call
from toolkit.agent import SYSTEM_PROMPT, AgentRun, run_agent, split_steps, task_context_for
from toolkit.llm.errors import describe_model_error
from toolkit.tools import DATA_DIR_ENV
from toolkit.verify import check_answer

SECRET = "sk-test-SECRET1234567890"


# --- a scripted model on the toolkit's offline server ---------------------------------------------

def tool_reply(*calls: tuple[str, str, Any]) -> dict:
    """A chat completion whose message asks for tools: calls are (id, name, arguments)."""
    return chat_completion(None, [tool_call(name, args, id=cid) for cid, name, args in calls])


def text_reply(text: str) -> dict:
    return chat_completion(text)


def http_error(status: int, message: str = "error") -> tuple[int, dict, dict]:
    """An OpenAI-style error reply; retry-after-ms 1 keeps any SDK retry instant (the SDK ignores 0)."""
    return status, OfflineAPIError(status, message).body(), {"retry-after-ms": "1"}


def sequence(*replies: Any) -> Callable[[dict], Any]:
    """A model_fn that gives the replies in order (the last one repeats)."""
    state = {"n": 0}

    def script(_: dict) -> Any:
        i = min(state["n"], len(replies) - 1)
        state["n"] += 1
        return replies[i]
    return script


def client_for(server: OfflineServer) -> openai.OpenAI:
    return sdk_client(server.base_url, SECRET)


# --- test tools ------------------------------------------------------------------------------

class Counter:
    def __init__(self) -> None:
        self.calls: list[dict] = []


@pytest.fixture
def tools() -> tuple[ToolRegistry, Counter]:
    registry, counter = ToolRegistry(), Counter()

    @registry.register
    def add(a: int, b: int) -> dict:
        """两数相加"""
        counter.calls.append({"a": a, "b": b})
        return {"sum": a + b}

    @registry.register
    def explode(reason: str) -> dict:
        """总是失败"""
        raise FatalToolError(f"工具坏了：{reason}", error_code="BROKEN")

    return registry, counter


def run(server: OfflineServer, question: str = "1 加 2 等于几？", **kw: Any) -> AgentRun:
    kw.setdefault("model", "scripted-model")
    return run_agent(question, client=client_for(server), **kw)


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


# --- the loop ----------------------------------------------------------------------------------

def test_tool_message_follows_assistant_tool_calls_with_matching_id(serve, tools):
    registry, counter = tools
    server = serve(sequence(tool_reply(("call_a1", "add", {"a": 1, "b": 2})), text_reply("1 加 2 等于 3。")))
    result = run(server, registry=registry)

    assert result.stopped == "answered" and result.answer == "1 加 2 等于 3。" and result.turns == 2
    assert counter.calls == [{"a": 1, "b": 2}]
    second = server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assistant, tool = second[2], second[3]
    assert assistant["tool_calls"][0]["id"] == "call_a1"
    assert assistant["tool_calls"][0]["function"]["name"] == "add"
    assert tool["tool_call_id"] == "call_a1"
    content = json.loads(tool["content"])
    assert content["status"] == "success" and content["result"] == {"sum": 3} and content["error"] is None


def test_request_offers_registry_tools_with_auto_choice_and_system_prompt(serve, tools):
    registry, _ = tools
    server = serve(sequence(text_reply("不需要工具。")))
    run(server, "你好", registry=registry, model="m-1")

    body = server.requests[0]
    assert body["model"] == "m-1" and body["tool_choice"] == "auto"
    assert body["tools"] == registry.openai_tools()
    assert body["messages"] == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "你好"}]


def test_several_calls_with_failing_and_unknown_tool_get_one_message_each_in_order(serve, tools):
    registry, counter = tools
    server = serve(sequence(
        tool_reply(("c1", "add", {"a": 2, "b": 2}), ("c2", "explode", {"reason": "坏"}), ("c3", "teleport", {})),
        text_reply("部分完成。")))
    result = run(server, registry=registry)

    tools_sent = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in tools_sent] == ["c1", "c2", "c3"]
    first, second, third = (json.loads(m["content"]) for m in tools_sent)
    assert first["status"] == "success" and first["result"] == {"sum": 4}
    assert second["status"] == "error" and second["error_code"] == "BROKEN" and "工具坏了" in second["error"]
    assert third["status"] == "error" and third["error_code"] == "UNKNOWN_TOOL" and "teleport" in third["error"]
    assert [r.call_id for r in result.tool_results] == ["c1", "c2", "c3"]
    assert len(counter.calls) == 1 and result.stopped == "answered"


def test_arguments_that_are_not_json_or_break_the_schema_become_error_messages(serve, tools):
    registry, counter = tools
    server = serve(sequence(
        tool_reply(("j1", "add", '{"a": 1, "b": '), ("j2", "add", {"a": "one", "b": 2}), ("j3", "add", {"a": 1})),
        text_reply("参数有误。")))
    result = run(server, registry=registry)

    codes = [json.loads(m["content"])["error_code"] for m in tool_messages(server.requests[1])]
    assert codes == ["INVALID_ARGUMENTS_JSON", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS"]
    assert counter.calls == [] and result.stopped == "answered"


def test_loop_stops_at_max_turns_with_a_chinese_message(serve, tools):
    registry, counter = tools
    turn = {"n": 0}

    def always_a_new_call(_: dict) -> dict:
        turn["n"] += 1
        return tool_reply((f"c{turn['n']}", "add", {"a": turn["n"], "b": 0}))
    server = serve(always_a_new_call)
    result = run(server, registry=registry, max_turns=3)

    assert result.stopped == "max_turns" and result.turns == 3 and len(server.requests) == 3
    assert "3 轮" in result.answer and "max_turns" in result.answer
    assert len(counter.calls) == 3 and not result.ok


def test_repeated_call_is_refused_and_not_run_again(serve, tools):
    registry, counter = tools
    server = serve(sequence(tool_reply(("r1", "add", '{"a": 1, "b": 2}')),
                            tool_reply(("r2", "add", '{"b":2,"a":1}')),  # same arguments, other order
                            text_reply("等于 3。")))
    result = run(server, registry=registry)

    assert counter.calls == [{"a": 1, "b": 2}]
    repeat = json.loads(tool_messages(server.requests[2])[-1]["content"])
    assert repeat["status"] == "error" and repeat["error_code"] == "REPEATED_CALL"
    assert "重复调用" in repeat["error"] and "第 1 次" in repeat["error"]
    assert result.repeated_calls == 1 and result.stopped == "answered"


def test_same_call_twice_in_one_reply_runs_once_but_both_ids_get_a_message(serve, tools):
    registry, counter = tools
    server = serve(sequence(tool_reply(("d1", "add", {"a": 5, "b": 5}), ("d2", "add", {"a": 5, "b": 5})),
                            text_reply("10")))
    run(server, registry=registry)

    sent = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in sent] == ["d1", "d2"]
    assert [json.loads(m["content"])["status"] for m in sent] == ["success", "error"]
    assert len(counter.calls) == 1


def test_repeat_after_a_transient_failure_is_allowed_to_run_again(serve):
    registry, attempts = ToolRegistry(), []

    @registry.register
    def flaky(city: str) -> dict:
        """有时超时"""
        attempts.append(city)
        if len(attempts) == 1:
            raise RetryableToolError("接口超时")
        return {"city": city, "weather": "晴"}
    server = serve(sequence(tool_reply(("f1", "flaky", {"city": "上海"})),
                            tool_reply(("f2", "flaky", {"city": "上海"})), text_reply("晴")))
    result = run(server, executor=ToolExecutor(max_retries=0, registry=registry))  # its registry is used

    assert attempts == ["上海", "上海"]
    assert [r.status for r in result.tool_results] == ["error", "success"]


def test_a_different_argument_is_not_a_repeat(serve, tools):
    registry, counter = tools
    server = serve(sequence(tool_reply(("x1", "add", {"a": 1, "b": 2})), tool_reply(("x2", "add", {"a": 1, "b": 3})),
                            text_reply("好")))
    result = run(server, registry=registry)
    assert len(counter.calls) == 2 and result.repeated_calls == 0


def test_tool_call_without_an_id_gets_one_that_its_tool_message_matches(serve, tools):
    registry, counter = tools
    no_id = tool_reply(("x", "add", {"a": 1, "b": 1}))
    no_id["choices"][0]["message"]["tool_calls"][0]["id"] = ""
    server = serve(sequence(no_id, text_reply("2")))
    result = run(server, registry=registry)

    assistant, tool = server.requests[1]["messages"][2:4]
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == "call_1_1"
    assert counter.calls == [{"a": 1, "b": 1}] and result.answer == "2"


def test_reply_without_choices_ends_the_run_as_an_error(serve, tools):
    registry, _ = tools
    empty = chat_completion("x")
    empty["choices"] = []
    server = serve(sequence(empty))
    result = run(server, registry=registry)
    assert result.stopped == "error" and "choices" in result.answer and result.turns == 1

# --- task context (chapter 04) ------------------------------------------------------------------------

WEATHER_FLIGHT = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"


@pytest.fixture
def travel_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def get_weather(city: str) -> dict:
        """查天气"""
        if city == "火星":
            raise FatalToolError("没有这个城市", error_code="NOT_FOUND")
        return {"city": city, "temp": 28, "humidity": "65%"}

    @registry.register
    def search_flights(origin: str, destination: str) -> list:
        """查航班"""
        return [{"flight": "MU5101", "from": origin, "to": destination}]
    return registry


def test_split_steps_finds_the_weather_and_flight_steps():
    assert split_steps(WEATHER_FLIGHT) == ["帮我查一下上海的天气", "查一下今天北京飞上海的航班"]
    assert split_steps("先查天气，再查航班，接着告诉我带不带伞") == ["先查天气", "查航班", "告诉我带不带伞"]
    assert split_steps("哪个类别销售额最高？总销售额是多少？") == ["哪个类别销售额最高？总销售额是多少"]


def test_task_context_for_auto_only_for_several_steps_and_copies_a_given_context():
    assert task_context_for("哪个类别销售额最高？") is None
    assert task_context_for(WEATHER_FLIGHT).steps == split_steps(WEATHER_FLIGHT)
    assert task_context_for("查天气", True).steps == ["查天气"]
    assert task_context_for(WEATHER_FLIGHT, False) is None
    given = TaskContext("任务", ["一", "二"])
    copy = task_context_for("q", given)
    copy.advance()
    assert given.done == 0 and copy.done == 1
    with pytest.raises(ValueError, match="task_context"):
        task_context_for("q", "sometimes")


def test_weather_then_flight_tool_messages_carry_task_progress(serve, travel_tools):
    server = serve(sequence(
        tool_reply(("w1", "get_weather", {"city": "上海"})),
        tool_reply(("s1", "search_flights", {"origin": "北京", "destination": "上海"})),
        text_reply("上海 28 度；航班 MU5101。")))
    result = run(server, WEATHER_FLIGHT, registry=travel_tools)

    weather_msg = tool_messages(server.requests[1])[0]["content"]
    block, rest = split_task_context(weather_msg)
    assert block is not None and "已完成步骤：1/2" in block
    assert "已完成：帮我查一下上海的天气" in block and "下一步：查一下今天北京飞上海的航班" in block
    assert json.loads(rest)["result"]["temp"] == 28
    block2, rest2 = split_task_context(tool_messages(server.requests[2])[1]["content"])
    assert "已完成步骤：2/2" in block2 and "所有步骤已完成" in block2
    assert json.loads(rest2)["result"][0]["flight"] == "MU5101"
    assert result.task_context.done == 2 and "任务进度：2/2" in result.summary()


def test_failed_step_does_not_advance_task_context(serve, travel_tools):
    server = serve(sequence(tool_reply(("w1", "get_weather", {"city": "火星"})), text_reply("查不到")))
    run(server, WEATHER_FLIGHT, registry=travel_tools)

    block, rest = split_task_context(tool_messages(server.requests[1])[0]["content"])
    assert "已完成步骤：0/2" in block and "下一步：帮我查一下上海的天气" in block
    assert json.loads(rest)["status"] == "error"


def test_single_step_question_sends_plain_json_without_task_context(serve, travel_tools):
    server = serve(sequence(tool_reply(("w1", "get_weather", {"city": "上海"})), text_reply("28 度")))
    run(server, "上海天气怎么样？", registry=travel_tools)
    content = tool_messages(server.requests[1])[0]["content"]
    assert not content.startswith("[TASK_CONTEXT]") and json.loads(content)["status"] == "success"


def test_caller_given_task_context_is_used_and_left_unchanged(serve, travel_tools):
    given = TaskContext("出行准备", ["查上海天气", "查航班", "给建议"])
    server = serve(sequence(tool_reply(("w1", "get_weather", {"city": "上海"})), text_reply("好")))
    result = run(server, "出行准备", registry=travel_tools, task_context=given)
    block, _ = split_task_context(tool_messages(server.requests[1])[0]["content"])
    assert "当前任务：出行准备" in block and "已完成步骤：1/3" in block and "下一步：查航班" in block
    assert given.done == 0 and result.task_context.done == 1


# --- endpoint failures and bad input ----------------------------------------------------------------

@pytest.mark.parametrize("status, words", [(401, "401"), (429, "429"), (500, "500"), (404, "404")])
def test_endpoint_http_error_ends_the_run_with_one_chinese_line_and_no_key(serve, tools, status, words):
    registry, _ = tools
    server = serve(sequence(http_error(status, f"bad key {SECRET}")))
    result = run(server, registry=registry)

    assert result.stopped == "error" and words in result.answer and "\n" not in result.answer
    assert SECRET not in result.answer and SECRET not in (result.error or "") and SECRET not in str(result)


def test_unreachable_endpoint_is_a_connection_error_run(tools):
    registry, _ = tools
    client = openai.OpenAI(api_key=SECRET, base_url="http://127.0.0.1:9/v1", max_retries=0)
    result = run_agent("q", client=client, model="m", registry=registry)
    assert result.stopped == "error" and "连不上模型接口" in result.answer and "127.0.0.1:9" in result.answer


def test_empty_model_reply_is_an_error_not_an_answer(serve, tools):
    registry, _ = tools
    empty = chat_completion("x")
    empty["choices"][0]["message"]["content"] = None
    empty["choices"][0]["finish_reason"] = "length"
    server = serve(sequence(empty))
    result = run(server, registry=registry)
    assert result.stopped == "error" and "没有返回文本回答" in result.answer


def test_describe_model_error_redacts_keys_in_server_messages(serve):
    server = serve(sequence(http_error(400, f"invalid request for key {SECRET}")))
    with pytest.raises(openai.BadRequestError) as info:
        client_for(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    text = describe_model_error(info.value)
    assert "HTTP 400" in text and SECRET not in text and "sk-***" in text


@pytest.mark.parametrize("kwargs, match", [
    ({"question": "  "}, "question"),
    ({"question": "q", "max_turns": 0}, "max_turns"),
    ({"question": "q", "model": None}, "model"),
])
def test_bad_arguments_raise_value_error_saying_how_to_fix(serve, kwargs, match):
    server = serve(sequence(text_reply("x")))
    kwargs = {"client": client_for(server), "model": "m", "registry": ToolRegistry(), **kwargs}
    with pytest.raises(ValueError, match=match):
        run_agent(kwargs.pop("question"), **kwargs)
    assert server.requests == []


# --- the record ---------------------------------------------------------------------------------

def test_transcript_and_summary_describe_the_run(serve, tools):
    registry, _ = tools
    server = serve(sequence(tool_reply(("t1", "add", {"a": 1, "b": 2}), ("t2", "explode", {"reason": "x"})),
                            text_reply("3")))
    with use_clock(SimulatedClock()):
        result = run(server, registry=registry)

    kinds = [(s["kind"], s["turn"]) for s in result.transcript]
    assert kinds == [("model", 1), ("tool", 1), ("tool", 1), ("model", 2)]
    assert result.transcript[0]["tool_calls"][0]["name"] == "add"
    assert [s["status"] for s in result.transcript if s["kind"] == "tool"] == ["success", "error"]
    assert all("duration_ms" in s for s in result.transcript)
    text = result.summary()
    assert "工具调用：2 次（成功 1，失败 1" in text and "结束方式：已回答" in text and "回答：3" in text
    assert str(result) == text and "messages" not in repr(result)
    lines = result.render_transcript(max_chars=60).splitlines()
    assert len(lines) == 4 and all(len(line) <= 60 for line in lines[1:3])
    assert result.messages[-1] == {"role": "assistant", "content": "3"}


def test_run_agent_works_inside_a_running_event_loop_like_jupyter(serve, tools):
    registry, counter = tools
    server = serve(sequence(tool_reply(("e1", "add", {"a": 4, "b": 4})), text_reply("8")))

    async def cell() -> AgentRun:
        return run(server, registry=registry)
    result = asyncio.run(cell())
    assert result.answer == "8" and counter.calls == [{"a": 4, "b": 4}]


# --- offline end to end: make_client() and the stand-in model, no scripting ------------------------

SALES_QUESTION = "哪个类别销售额最高？总销售额是多少？"
MODEL_VARS = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME")


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No model variables and no .env (a developer's real .env must not send these tests to a real endpoint)."""
    for name in MODEL_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(llm_config, "default_dotenv_path", lambda: tmp_path / "no.env")
    return tmp_path


def sales_data_dir(monkeypatch, tmp_path, csv_text: str | None) -> None:
    """Point the tools at a tmp data dir holding `csv_text` as sales.csv (None: no file at all)."""
    data = tmp_path / "data"
    data.mkdir()
    if csv_text is not None:
        (data / "sales.csv").write_text(csv_text, encoding="utf-8")
    monkeypatch.setenv(DATA_DIR_ENV, str(data))


def test_offline_sales_question_is_answered_from_the_tool_result(offline):
    result = run_agent(SALES_QUESTION)

    assert result.stopped == "answered" and result.model == OFFLINE_MODEL
    assert [r.name for r in result.tool_results] == ["analyze_sales_csv"]
    tool_result = result.tool_results[0]
    assert tool_result.ok and tool_result.data["total_sales"] == 9692
    assert tool_result.source == ["data/input/sales.csv"]
    for fact in ("显示器", "4495", "9692"):
        assert fact in result.answer
    verdict = check_answer(result.answer, tool_result, question=SALES_QUESTION)
    assert verdict.ok, verdict.report()


@pytest.mark.parametrize("csv_text, code", [
    (None, "FILE_NOT_FOUND"),
    ("category,quantity,unit_price\n键盘,12,199\n鼠标,abc,79\n显示器,5,899\n", "INVALID_SALES_CSV"),
])
def test_offline_failed_analysis_says_so_without_invented_numbers(offline, monkeypatch, csv_text, code):
    sales_data_dir(monkeypatch, offline, csv_text)
    result = run_agent(SALES_QUESTION)

    assert result.stopped == "answered"
    assert result.tool_results[0].error_code == code
    assert "失败" in result.answer or "无法" in result.answer
    for invented in ("9692", "4495", "2985", "2388"):
        assert invented not in result.answer
    verdict = check_answer(result.answer, result.tool_results[0], question=SALES_QUESTION)
    assert verdict.ok and verdict.tool_failed, verdict.report()


def test_offline_weather_then_flight_needs_the_task_context_to_finish_both_steps(offline):
    with_context = run_agent(WEATHER_FLIGHT)
    without = run_agent(WEATHER_FLIGHT, task_context=False)

    assert [r.name for r in with_context.tool_results] == ["get_weather", "search_flights"]
    assert with_context.task_context.done == 2 and "LAB101" in with_context.answer
    # the lesson of chapter 04: without the [TASK_CONTEXT] block the model stops after the weather
    assert [r.name for r in without.tool_results] == ["get_weather"] and "LAB101" not in without.answer


def test_offline_model_that_ignores_results_is_caught_by_check_answer(offline):
    result = run_agent(SALES_QUESTION, model=f"{OFFLINE_MODEL}:ignore-results")
    assert result.stopped == "answered" and result.tool_results[0].ok
    assert not check_answer(result.answer, result.tool_results[0], question=SALES_QUESTION).ok


def test_offline_looping_model_is_told_it_repeats_and_stopped_by_max_turns(offline):
    result = run_agent(SALES_QUESTION, model=f"{OFFLINE_MODEL}:loop", max_turns=4)

    assert result.stopped == "max_turns" and result.turns == 4
    assert [r.status for r in result.tool_results] == ["success", "error", "error", "error"]
    assert result.repeated_calls == 3
    assert all("第 1 次" in r.error for r in result.tool_results[1:])


@pytest.mark.parametrize("variant, codes", [
    ("unknown-tool", ["UNKNOWN_TOOL", None]),
    ("bad-arguments", ["INVALID_ARGUMENTS_JSON", "INVALID_ARGUMENTS", None]),
])
def test_offline_misbehaving_model_gets_error_messages_then_answers(offline, variant, codes):
    result = run_agent(SALES_QUESTION, model=f"{OFFLINE_MODEL}:{variant}")

    assert [r.error_code for r in result.tool_results] == codes
    assert result.stopped == "answered" and "9692" in result.answer
