"""Tests for toolkit.decisions: evaluate_tool_result's eight actions, the seed's empty-value bug, apply_decision."""
from __future__ import annotations

import json

import pytest

from toolkit import ToolResult, evaluate_tool_result
from toolkit.decisions import ACTIONS, apply_decision


def decide(data=None, error=None, **fields) -> dict:
    return evaluate_tool_result(ToolResult("tool", data, error, **fields), "上海今天天气如何？")


def test_the_eight_actions_are_the_documented_ones():
    assert set(ACTIONS) == {"present_directly", "retry_with_broader_query", "summarize_and_present",
                            "retry", "report_error", "present_partial", "present_broadened", "call_more_tools"}


def test_enough_information_is_presented_directly():
    decision = decide({"城市": "上海", "天气": "晴"})
    assert decision["action"] == "present_directly"
    assert decision["data"] == {"城市": "上海", "天气": "晴"}
    assert "上海今天天气如何" in decision["suggestion"]


@pytest.mark.parametrize("empty", [None, "", "   ", "[]", "{}", "null", [], {}, (), set()])
def test_empty_results_ask_for_a_broader_query(empty):
    decision = decide(empty)
    assert decision["action"] == "retry_with_broader_query"
    assert "放宽" in decision["suggestion"]


@pytest.mark.parametrize("answer", [0, 0.0, False, "0", [0], {"count": 0}])
def test_zero_and_false_are_answers_not_empty_seed_bug(answer):
    decision = decide(answer)
    assert decision["action"] == "present_directly"
    assert decision["data"] == answer


def test_long_text_is_summarized_within_the_limit():
    decision = decide("\n".join(f"第{i}条新闻：内容" for i in range(2000)))
    assert decision["action"] == "summarize_and_present"
    assert len(decision["data"]) < 5000 + 100


def test_long_structured_data_is_summarized_as_valid_json():
    rows = {"items": [{"id": i, "name": f"商品{i}"} for i in range(2000)]}
    decision = decide(rows)
    assert decision["action"] == "summarize_and_present"
    summary = json.loads(decision["data"])  # never cut in the middle of a JSON token
    assert summary["items"][0] == {"id": 0, "name": "商品0"}
    assert "未显示" in decision["data"]


@pytest.mark.parametrize("items, limit, action", [
    (1500, 6000, "summarize_and_present"),   # about 7,900 characters of JSON
    (1500, 8000, "present_directly"),
    (1000, 5000, "present_directly"),        # about 4,900 characters
    (3000, 5000, "summarize_and_present"),
])
def test_the_long_limit_is_the_one_passed(items, limit, action):
    data = {"items": list(range(items))}
    decision = evaluate_tool_result(ToolResult("t", data), "q", long_chars=limit)
    assert decision["action"] == action


def test_retryable_failure_suggests_retrying_and_says_attempts():
    decision = decide(error="请求超时", error_type="retryable", error_code="TIMEOUT", attempts=4)
    assert decision["action"] == "retry"
    assert decision["error_type"] == "retryable"
    assert "已自动尝试 4 次" in decision["suggestion"]
    assert "不要无限重试" in decision["suggestion"]


@pytest.mark.parametrize("code, words", [
    ("PERMISSION_DENIED", "授权"),
    ("FORBIDDEN", "授权"),
    ("UNAUTHORIZED", "API Key"),
    ("INVALID_ARGUMENTS", "修正参数"),
    ("INVALID_ARGUMENTS_JSON", "JSON"),
    ("UNKNOWN_TOOL", "已注册"),
    ("FILE_NOT_FOUND", "不要编造"),
    ("CIRCUIT_OPEN", "备用工具"),
    ("SOMETHING_NEW", "替代方案"),
])
def test_fatal_failure_reports_the_error_with_a_fitting_suggestion(code, words):
    decision = decide(error="出错了", error_type="fatal", error_code=code)
    assert decision["action"] == "report_error"
    assert decision["error_type"] == "fatal"
    assert "出错了" in decision["message"]
    assert words in decision["suggestion"]


def test_error_without_a_kind_is_reported_as_fatal():
    decision = decide(error="boom")
    assert decision["action"] == "report_error"
    assert decision["error_type"] == "fatal"


def test_partial_result_presents_what_arrived_and_what_is_missing():
    decision = decide({"上海": "晴"}, "北京缺失", error_type="partial", missing="北京的天气接口超时")
    assert decision["action"] == "present_partial"
    assert decision["data"] == {"上海": "晴"}
    assert decision["missing"] == "北京的天气接口超时"


def test_seed_call_shape_works_and_rejects_raw_values():
    assert evaluate_tool_result(ToolResult("search", "晴"), "天气")["action"] == "present_directly"
    with pytest.raises(TypeError, match="ToolResult"):
        evaluate_tool_result({"data": 1}, "q")


def test_a_success_with_a_step_left_calls_more_tools_and_names_the_step():
    decision = evaluate_tool_result(ToolResult("get_weather", {"天气": "晴"}), "北京天气？航班？",
                                    next_step="查询北京到上海的航班")
    assert decision["action"] == "call_more_tools"
    assert "查询北京到上海的航班" in decision["suggestion"] and "直接依据结果回答" not in decision["suggestion"]


@pytest.mark.parametrize("result, action", [
    (ToolResult("t", None, "超时", error_type="retryable"), "retry"),
    (ToolResult("t", {"上海": "晴"}, "北京缺失", error_type="partial", missing="北京"), "present_partial"),
    (ToolResult("t", []), "retry_with_broader_query"),
])
def test_a_step_left_does_not_hide_a_failure_a_partial_or_an_empty_result(result, action):
    assert evaluate_tool_result(result, "q", next_step="下一步")["action"] == action


def test_a_broadened_result_says_what_the_data_does_not_show():
    orders = [{"order_id": "A0001", "city": "上海", "status": "已完成"}]
    decision = evaluate_tool_result(ToolResult("search_orders", orders), "上海有哪些退款中的订单？",
                                    broadened_from={"status": "退款中"})
    assert decision["action"] == "present_broadened"
    assert "status=退款中" in decision["suggestion"] and "不满足" in decision["suggestion"]
    assert "直接依据结果回答" not in decision["suggestion"]


def test_a_broadened_query_that_is_still_empty_is_not_broadened_again():
    decision = evaluate_tool_result(ToolResult("search_orders", []), "q", broadened_from={"status": "退款中"})
    assert decision["action"] == "present_broadened"
    assert "不要再放宽" in decision["suggestion"]


PARTIAL = ToolResult("weather", {"上海": "晴"}, "部分结果缺失：北京", error_type="partial", missing="北京", truncated=False)


def test_applying_present_directly_to_a_partial_result_shows_it_as_complete():
    shown = apply_decision(PARTIAL, {"action": "present_directly"}, 8000)
    assert shown.status == "success" and shown.missing is None and shown.data == {"上海": "晴"}
    assert apply_decision(PARTIAL, {"action": "present_partial"}, 8000) is PARTIAL


def test_applying_a_summary_replaces_the_data_within_the_budget():
    whole = ToolResult("t", {"items": list(range(3000))}, truncated=False)
    decision = evaluate_tool_result(whole, "q")
    shown = apply_decision(whole, decision, 8000)
    assert shown.data == json.loads(decision["data"]) and shown.truncated is True
    cut = apply_decision(whole, {"action": "summarize_and_present", "data": "x" * 9000}, 100)
    assert len(json.dumps(cut.data, ensure_ascii=False)) <= 100


def test_a_summary_of_a_text_the_result_already_is_keeps_the_text_as_it_was_made():
    """A parse plug-in's JSON text, cut or not, is its author's view: deciding to summarize it must not turn it
    back into data (chapter 01 shows the model reading the student's text)."""
    text = json.dumps({"row_count": 5, "total_sales": 9692}, ensure_ascii=False)
    made = ToolResult("analyze_sales_csv", text, truncated=True)
    decision = evaluate_tool_result(made, "q")
    assert decision["action"] == "summarize_and_present"
    assert apply_decision(made, decision, 8000) is made


def test_a_decision_never_turns_a_failure_into_data_and_a_strange_one_changes_nothing():
    failed = ToolResult("t", None, "权限不足", error_type="fatal", truncated=False)
    assert apply_decision(failed, {"action": "present_directly"}, 8000) is failed
    assert apply_decision(failed, {"action": "summarize_and_present", "data": "[1]"}, 8000) is failed
    for strange in (None, "present_directly", {"action": 3}, {"action": "present_directly", "data": object()}):
        assert apply_decision(ToolResult("t", 1, truncated=False), strange, 8000).data == 1
