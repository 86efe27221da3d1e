"""The offline model reads the road's decision in each tool message, as a real model reads the program's
instruction: a failure decision makes it report instead of answering, call_more_tools makes it call the next
tool, any other decision makes it answer now; the decision reaches it through a format_message plug-in too."""
from __future__ import annotations

import json

import pytest

from toolkit import ToolRegistry, ToolResult, evaluate_tool_result
from toolkit.agent import run_agent
from toolkit.clock import SimulatedClock, use_clock
from toolkit.llm.offline import respond
from toolkit.messages import format_tool_message
from toolkit.plugins import DECISION_MARK, plugin_message

SALES = "哪个类别销售额最高？总销售额是多少？"
TWO_STEPS = "先查北京今天的天气，再查北京到上海的航班"


def run(question, **kwargs):
    with use_clock(SimulatedClock(seed=0)):
        return run_agent(question, **kwargs)


def says_fails(result, user_query):
    return {"action": "report_error", "suggestion": "别回答，告诉用户这一步失败了"}


def two_args(result, user_query):
    """The chapter's classroom version: no next_step, so every success is present_directly."""
    if result.status == "error":
        return {"action": "report_error", "suggestion": "如实告诉用户失败了"}
    return {"action": "present_directly", "suggestion": f"直接依据结果回答：{user_query}"}


def test_report_error_on_a_good_result_makes_the_model_report_instead_of_answering():
    toolkit, wrong = run(SALES), run(SALES, evaluate=says_fails)
    assert "9692" in toolkit.answer
    assert wrong.tool_results[0].ok and "9692" not in wrong.answer
    assert "report_error" in wrong.answer and "别回答，告诉用户这一步失败了" in wrong.answer
    assert wrong.answer != toolkit.answer


def test_an_answering_decision_with_steps_left_makes_the_model_stop_and_call_more_tools_makes_it_go_on():
    toolkit, classroom = run(TWO_STEPS), run(TWO_STEPS, evaluate=two_args)
    assert [r.name for r in toolkit.tool_results] == ["get_weather", "search_flights"]
    assert [d["action"] for d in toolkit.decisions] == ["call_more_tools", "present_directly"]
    assert [r.name for r in classroom.tool_results] == ["get_weather"]
    assert "search_flights" not in classroom.answer and "search_flights" in toolkit.answer


def test_without_a_task_context_the_model_calls_the_tool_the_suggestion_names():
    def more(result, user_query, next_step=None):
        if result.name == "get_weather":
            return {"action": "call_more_tools", "suggestion": "天气已拿到；接着查北京到上海的航班"}
        return {"action": "present_directly", "suggestion": "直接回答"}

    plain = run(TWO_STEPS, task_context=False, evaluate=two_args)
    asked = run(TWO_STEPS, task_context=False, evaluate=more)
    assert [r.name for r in plain.tool_results] == ["get_weather"]
    assert [r.name for r in asked.tool_results] == ["get_weather", "search_flights"]


def test_call_more_tools_that_no_tool_can_do_is_said_in_the_answer():
    def more(result, user_query):
        return {"action": "call_more_tools", "suggestion": "接着预订酒店"}

    answer = run("北京今天天气怎么样？", evaluate=more).answer
    assert "call_more_tools" in answer and "接着预订酒店" in answer and "以上只是已经完成的部分" in answer


def test_an_action_the_model_does_not_know_stops_it_and_is_quoted():
    def stop(result, user_query):
        return {"action": "stop", "suggestion": "先问用户要哪天的航班"}

    stopped = run(TWO_STEPS, evaluate=stop)
    assert [r.name for r in stopped.tool_results] == ["get_weather"]
    assert "程序的决定是 stop：先问用户要哪天的航班" in stopped.answer


def test_a_broadened_result_is_presented_as_reference_with_the_suggestion():
    result = ToolResult("search_orders", [{"order_id": "A0003", "status": "已完成"}], truncated=False)
    decision = evaluate_tool_result(result, "上海有哪些退款中的订单？", broadened_from={"status": "退款中"})
    body = _answer([("search_orders", format_tool_message("search_orders", "c1", result, decision=decision))])
    assert "不是按原条件查到的" in body and "不满足 status=退款中" in body and "仅供参考" in body
    plain = _answer([("search_orders", format_tool_message("search_orders", "c1", result,
                                                            decision=evaluate_tool_result(result, "q")))])
    assert "仅供参考" not in plain


def test_a_failure_answer_quotes_the_decision_suggestion():
    failed = ToolResult("analyze_sales_csv", None, "找不到文件", error_type="fatal", error_code="FILE_NOT_FOUND",
                        truncated=False)
    with_one = _answer([("analyze_sales_csv", format_tool_message(
        "analyze_sales_csv", "c1", failed, decision={"action": "report_error", "suggestion": "请用户检查文件名"}))])
    without = _answer([("analyze_sales_csv", format_tool_message("analyze_sales_csv", "c1", failed))])
    assert "程序的建议：请用户检查文件名" in with_one and "程序的建议" not in without


def test_the_decision_reaches_the_model_through_a_format_message_plugin():
    def as_json(tool_name, call_id, result):
        return {"role": "tool", "tool_call_id": call_id,
                "content": json.dumps({"status": result.status, "result": result.data}, ensure_ascii=False)}

    def as_text(tool_name, call_id, result):
        return {"role": "tool", "tool_call_id": call_id, "content": f"{tool_name}：{result.data}"}

    for plugin in (as_json, as_text):
        good, wrong = run(SALES, format_message=plugin), run(SALES, format_message=plugin, evaluate=says_fails)
        sent = next(m["content"] for m in wrong.messages if m["role"] == "tool")
        assert "别回答，告诉用户这一步失败了" in sent
        assert "9692" in good.answer and "9692" not in wrong.answer and "report_error" in wrong.answer
        assert DECISION_MARK not in good.answer  # the decision line is not read as data


def test_a_plugins_message_gets_the_decision_once_and_keeps_its_own():
    decision = {"action": "retry", "suggestion": "稍后再试"}
    own = {"role": "tool", "tool_call_id": "c", "content": json.dumps({"status": "success", "decision": "mine"})}
    assert plugin_message(own, "c", 1000, decision)["content"] == own["content"]
    for bad in ("text", {"content": 42}, None):  # not a message: the same Chinese TypeError as without a decision
        with pytest.raises(TypeError, match="format_message 应返回"):
            plugin_message(bad, "c", 1000, decision)
    plain = {"role": "tool", "tool_call_id": "c", "content": "ok"}
    assert plugin_message(plain, "c", 1000, None)["content"] == "ok"
    line = plugin_message(plain, "c", 1000, decision)["content"].split("\n")[-1]
    assert json.loads(line.removeprefix(DECISION_MARK + " ")) == decision
    long = {"role": "tool", "tool_call_id": "c", "content": json.dumps({"rows": list(range(5000))})}
    content = plugin_message(long, "c", 1000, decision)["content"]  # room is kept for it within the budget
    assert len(content) <= 1000 and json.loads(content)["decision"] == decision


def test_a_long_text_is_answered_with_the_line_the_question_asks_about():
    from toolkit.capstone import REPORT

    registry = ToolRegistry()
    registry.register(lambda: REPORT, name="read_report", description="读取本季度销售报告的全文", kind="read",
                      parameters={"type": "object", "properties": {}, "additionalProperties": False})
    answer = run("读一下销售报告，总计是多少？", registry=registry).answer
    assert "总计：9692" in answer and "第 001 笔" not in answer
    head = REPORT[:300]  # what a head-only cut leaves: the total is gone, so the answer cannot say it
    registry.register(lambda: head, name="read_report", description="读取本季度销售报告的全文", kind="read",
                      parameters={"type": "object", "properties": {}, "additionalProperties": False})
    assert "9692" not in run("读一下销售报告，总计是多少？", registry=registry).answer


def _answer(results: list[tuple[str, dict]]) -> str:
    """The offline model's answer to tool messages (name, message) as if it had called each tool."""
    messages = [{"role": "user", "content": "问题"}]
    for name, message in results:
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": message["tool_call_id"], "type": "function", "function": {"name": name, "arguments": "{}"}}]})
        messages.append(message)
    body = respond({"model": "offline-stand-in", "messages": messages, "tools": [], "tool_choice": "none"})
    return body["choices"][0]["message"]["content"]


def test_a_last_assistant_call_left_unanswered_is_refused_like_the_real_api():
    """A loop that runs the tool but forgets its tool message: the API says 400, naming the call."""
    import pytest

    from toolkit.llm.offline import BadRequest

    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    with pytest.raises(BadRequest, match="缺少 call_1"):
        respond({"model": "offline-stand-in", "messages": [{"role": "user", "content": "问题"},
                                                          {"role": "assistant", "content": None, "tool_calls": [call]}]})
