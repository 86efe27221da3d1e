"""run_agent's plug-in points (format_message, evaluate, check) and what a run shows (summary, repr).

A student's function plugged into run_agent may raise or return the wrong type:
the model then gets an error result naming the plug-in (PLUGIN_ERROR), or the run
an error reason; the run itself never raises.
"""
from __future__ import annotations

import json

import pytest

from support import scripted_client
from toolkit import ErrorCode, ToolRegistry, evaluate_tool_result
from toolkit.agent import run_agent
from toolkit.llm import Settings
from toolkit.verify import check_answer

KEY = "sk-" + "modelleakedthiskey0123456789"


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.register
    def add(a: int, b: int) -> dict:
        """把两个整数相加"""
        return {"sum": a + b}

    return reg


def run_add(**plugins):
    client, requests = scripted_client([{"tool_calls": [("add", '{"a": 1, "b": 2}')]}, {"content": "1 加 2 等于 3。"}])
    return run_agent("1 加 2 等于几？", client=client, model="scripted", registry=registry(), **plugins), requests


def test_format_message_plugin_shapes_what_the_model_reads():
    def my_format(tool_name, tool_call_id, result):
        return {"role": "tool", "tool_call_id": tool_call_id, "content": f"{tool_name} 的结果：{result.data['sum']}"}

    run, requests = run_add(format_message=my_format)
    assert run.ok and run.tool_results[0].ok
    tool_message = [m for m in requests[1]["messages"] if m["role"] == "tool"][0]
    text, decision = tool_message["content"].split("\n")  # the plug-in's text, then the road's decision
    assert text == "add 的结果：3" and tool_message["tool_call_id"] == "call_1_1"
    assert json.loads(decision.removeprefix("[DECISION] "))["action"] == "present_directly"


@pytest.mark.parametrize("bad", [
    lambda name, call_id, result: 1 / 0,
    lambda name, call_id, result: "not a dict",
    lambda name, call_id, result: {"role": "tool"},
    lambda name, call_id, result: {"content": 42},
])
def test_a_failing_format_message_gives_the_model_a_plugin_error(bad):
    run, requests = run_add(format_message=bad)
    assert run.ok
    result = run.tool_results[0]
    assert result.status == "error" and result.error_code == ErrorCode.PLUGIN_ERROR and "format_message" in result.error
    sent = json.loads([m for m in requests[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert sent["status"] == "error" and sent["error_code"] == ErrorCode.PLUGIN_ERROR


def test_evaluate_plugin_decisions_are_recorded():
    run, _ = run_add(evaluate=evaluate_tool_result)
    assert run.ok and [d["action"] for d in run.decisions] == ["present_directly"]
    assert run.decisions[0]["tool"] == "add"


@pytest.mark.parametrize("bad", [lambda result, query: {}["missing"], lambda result, query: ["a list"]])
def test_a_failing_evaluate_gives_the_model_a_plugin_error(bad):
    run, _ = run_add(evaluate=bad)
    assert run.ok and run.tool_results[0].error_code == ErrorCode.PLUGIN_ERROR and "evaluate" in run.tool_results[0].error
    assert run.decisions[0]["action"] == "plugin_error"


def test_check_plugin_verdict_is_kept_on_the_run():
    run, _ = run_add(check=lambda answer, results: check_answer(answer, *results, question="1 加 2"))
    assert run.ok and run.check.ok and run.error is None


def test_a_failing_check_gives_the_run_an_error_reason_not_an_exception():
    def broken(answer, results):
        raise RuntimeError("学生的检查函数出错了")

    run, _ = run_add(check=broken)
    assert run.ok and run.check is None
    assert "check" in run.error and "RuntimeError" in run.error


def test_a_plugin_that_is_not_callable_is_refused_up_front():
    with pytest.raises(ValueError, match="evaluate"):
        run_agent("x", client=object(), model="m", evaluate="present_directly")


# --- what a run shows -------------------------------------------------------------------------

def test_summary_print_and_repr_mask_a_key_the_model_put_in_its_answer():
    client, _ = scripted_client([{"content": f"你的密钥是 {KEY}"}])
    run = run_agent("我的密钥是什么？", client=client, model="scripted", registry=registry())
    for shown in (run.summary(), str(run), repr(run), run.answer, run.render_transcript()):
        assert KEY not in shown and "modelleakedthiskey" not in shown
    assert "sk-***" in run.summary()


@pytest.mark.parametrize("url, hidden", [
    ("https://alice:hunter2hunter2@llm.example.com/v1", "hunter2hunter2"),
    ("https://llm.example.com/v1?api_key=AIzaSyD-secret-value-123", "AIzaSyD-secret-value-123"),
    ("https://llm.example.com/v1?sig=abcdef0123456789&x=1", "abcdef0123456789"),
    ("https://user@llm.example.com/v1", "user@"),
])
def test_settings_repr_hides_credentials_in_the_base_url(url, hidden):
    settings = Settings(url, "m", "sk-" + "a" * 30)
    for shown in (repr(settings), str(settings)):
        assert hidden not in shown and "llm.example.com" in shown
