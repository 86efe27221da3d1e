"""Chapter 05's self-check answers are true of the code: each test_qN_ checks the claims of 想一想 N.

The chapter's own cells (the naive version, the tools, the classroom evaluate_tool_result) are read from the
notebook and run here, so the answers are checked against the code the student runs, not a copy."""
from __future__ import annotations

import asyncio
import json
import re
import sys
import types
from pathlib import Path

import pytest

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, evaluate_tool_result, use_clock
from toolkit.agent import run_agent

from notebook_answers import answer, assert_a_wrong_answer_fails, number, said

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_decisions.ipynb"
CHAPTER = NOTEBOOK  # the notebook whose answers test_qN_ read (a wrong copy of it in the test below)


def cell(marker: str) -> str:
    """The source of the chapter's first code cell containing `marker` (the chapter's own version, not a your-turn
    cell the student fills in), up to its demo call (check(…), loops)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "code"
                  and "your-turn" not in c["metadata"].get("tags", []) and marker in "".join(c["source"]))
    for end in ("\ncheck(", "\nexecutor = ", "\nregistry = "):
        source = source.split(end)[0]
    return source


def chapter(*markers: str) -> dict:
    """The cells run in a fresh module (registered, as a notebook's __main__ is: dataclasses look it up)."""
    module = types.ModuleType("chapter_05_answers")
    sys.modules[module.__name__] = module
    for marker in markers:
        exec(compile(cell(marker), f"05_decisions:{marker}", "exec"), module.__dict__)
    return module.__dict__


def test_q1_the_naive_version_calls_0_and_false_empty_and_a_partial_result_a_success():
    ns = chapter("def naive_evaluate_tool_result(")
    naive, Result = ns["naive_evaluate_tool_result"], ns["NaiveToolResult"]
    assert naive(Result("count_orders", 0), "q")["action"] == "retry_with_broader_query"
    assert naive(Result("is_completed", False), "q")["action"] == "retry_with_broader_query"
    assert not 0 and not False  # the reason the answer gives
    assert naive(Result("weather_two_days", {"今天": "晴 24°C"}), "q")["action"] == "present_directly"


def _weather_runs() -> dict:
    ns = chapter("def search_orders(", "def is_empty(", "课堂版", "def forgets_partial(")
    registry = ToolRegistry()
    registry.register(ns["weather_two_days"])
    runs = {}
    for name in ("forgets_partial", "evaluate_tool_result"):
        with use_clock(SimulatedClock(seed=0)):
            runs[name] = run_agent("北京今天和明天天气怎么样？", registry=registry, evaluate=ns[name])
    return runs


def test_q2_a_partial_result_presented_directly_reaches_the_model_as_complete():
    runs = _weather_runs()
    read = {name: json.loads(next(m["content"] for m in run.messages if m["role"] == "tool"))
            for name, run in runs.items()}
    assert read["forgets_partial"]["status"] == "success" and "missing" not in read["forgets_partial"]
    assert read["evaluate_tool_result"]["status"] == "partial" and "明天的预报" in read["evaluate_tool_result"]["missing"]
    assert "缺失" not in runs["forgets_partial"].answer
    assert "缺失部分：明天的预报" in runs["evaluate_tool_result"].answer


def test_q3_an_unknown_error_is_tried_once_and_handed_to_a_human_with_the_call_recorded():
    """The answer's claims: one call, UNKNOWN, report_error with the suggestion it quotes, the record kept."""
    said_here = answer(CHAPTER, 3)

    def buggy_report():
        return 1 / 0

    executor = ToolExecutor(max_retries=3)
    with use_clock(SimulatedClock(seed=0)):
        result = asyncio.run(executor.execute(buggy_report, "buggy_report"))
    assert result.attempts == number(said_here, r"只调用 (\d+) 次") == 1
    assert result.error_type == "fatal" and result.error_code == said(said_here, r"不可重试的 `(\w+)`") == "UNKNOWN"
    decision = evaluate_tool_result(result, "问题")
    assert decision["action"] == said(said_here, r"决定是 `(\w+)`") == "report_error"
    assert decision["suggestion"] == said(said_here, r"建议“([^”]+)”")
    assert list(executor.call_history)[-1] is result


def test_the_completion_table_names_the_toolkits_actions_and_the_answer_check_of_chapter_07():
    """The table of 什么时候算做完 names, for what is not yet enough, the decision tree's actions (each one of them
    but answering and broadening); its last row is chapter 07's check_answer (done when the answer passes it)."""
    from toolkit.decisions import ACTIONS
    from toolkit.verify import check_answer  # noqa: F401  the name the table gives

    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    table = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("### 什么时候算做完"))
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| 要确认的")]
    named = {name for row in rows for name in re.findall(r"`([a-z_]+)`", row.split("|")[4])}
    # what to do when something is not enough: every action but answering and the program's own broadening
    assert named == set(ACTIONS) - {"present_directly", "present_broadened"}, named ^ set(ACTIONS)
    assert "`check_answer`（第 07 章）" in rows[-1] and "不算完成" in rows[-1]


def test_q4_a_broadened_result_has_its_own_action_saying_what_the_data_does_not_meet():
    ns = chapter("def search_orders(")
    question = "上海有哪些退款中的订单？"
    with use_clock(SimulatedClock(seed=0)):
        first = asyncio.run(ToolExecutor().execute(ns["search_orders"], "search_orders", city="上海", status="退款中"))
        second = asyncio.run(ToolExecutor().execute(ns["search_orders"], "search_orders", city="上海"))
    assert first.data == [] and evaluate_tool_result(first, question)["action"] == "retry_with_broader_query"
    assert len(second.data) == 29 and not any(o["status"] == "退款中" for o in second.data)
    assert evaluate_tool_result(second, question)["suggestion"] == f"直接依据结果回答：{question}"
    decision = evaluate_tool_result(second, question, broadened_from={"status": "退款中"})
    assert decision["action"] == "present_broadened"
    assert "这些记录不满足 status=退款中，不是原问题要的" in decision["suggestion"]
    assert "先说明没有符合原条件的结果" in decision["suggestion"]


def test_q5_a_success_with_a_step_left_calls_more_tools_and_the_two_argument_version_is_not_told():
    mine = chapter("def is_empty(", "课堂版")["evaluate_tool_result"]
    question = "先查北京今天的天气，再查北京到上海的航班"
    with use_clock(SimulatedClock(seed=0)):
        toolkit_run = run_agent(question, evaluate=evaluate_tool_result)
        my_run = run_agent(question, evaluate=mine)
    assert [(d["tool"], d["action"]) for d in toolkit_run.decisions] == [
        ("get_weather", "call_more_tools"), ("search_flights", "present_directly")]
    assert "接着调用工具完成：查北京到上海的航班；全部完成后再回答" in toolkit_run.decisions[0]["suggestion"]
    assert [r.name for r in toolkit_run.tool_results] == ["get_weather", "search_flights"]
    # the two-argument version says present_directly on the weather: the model answers there, flights not asked
    assert [d["action"] for d in my_run.decisions] == ["present_directly"]
    assert [r.name for r in my_run.tool_results] == ["get_weather"] and "search_flights" not in my_run.answer


def test_the_picker_says_what_a_page_without_widgets_shows_the_stored_table():
    """Section 6's claim about pages: the stored output is the widget, a table of the picked result and its
    decision (shown where widgets are not), and one line of text (shown where only text is)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("## 6. 自己试：决策选择器"))
    assert "显示那张表" in text and "只能显示纯文本的地方，才只剩下面这一行字" in text
    picker = next(c for c in cells if c["cell_type"] == "code" and "DecisionPicker(" in "".join(c["source"]))
    [bundle] = [o["data"] for o in picker["outputs"] if o.get("output_type") == "execute_result"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    table = "".join(bundle["text/html"])
    assert "<table" in table and "A0002 是否完成（False）" in table and "present_directly" in table and "建议" in table
    assert len("".join(bundle["text/plain"]).splitlines()) == 1


WRONG_ANSWERS = [(3, "只调用 1 次", "只调用 4 次"), (3, "记录日志，交给人工处理", "自动重试三次")]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
