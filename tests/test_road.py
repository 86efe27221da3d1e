"""The road goes one way: each tool call is read once, its data budgeted once, its decision reaches the model.

Counted, not assumed: `Road` wraps the toolkit's own functions wherever a module
holds them (and json.loads, by calling module), and each kind of result (envelope,
partial, cut, long uncut, error, text, retried, a format_message plug-in's) has its
passes stated exactly, so a second pass added anywhere on the road fails here.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import threading
from collections import Counter
from typing import Any, Callable

import pytest
from support import scripted_client

from toolkit import PartialResult, SimulatedClock, ToolExecutor, ToolRegistry, ToolResult, use_clock
from toolkit.agent import run_agent

SALES = {"highest_category": "显示器", "total_sales": 9692,
         "category_sales": [{"category": "显示器", "sales": 4495}, {"category": "键盘", "sales": 2985}]}


# What the road may do to a tool's data: the budget and parse passes, the envelope, redaction, serialising.
COUNTED = ("fit_and_redact", "fit_for_model", "shrink_json", "parse_tool_result", "smart_truncate", "truncate_parts",
           "unwrap_envelope", "error_from_envelope", "redact_value", "dumps")
HOMES = ("toolkit.fitting", "toolkit.parsing", "toolkit.results", "toolkit.safety", "toolkit.shrink", "toolkit.truncate")


class Road:
    """Counts of the road's passes over a tool's data: `passes` {"name in module": calls} and `inner` {name: calls}.

    Every counted function is wrapped in every toolkit module that holds it, its home
    included, and so is json.loads (by the calling module). A call made while another
    counted call runs is an inner step of that pass (fit_and_redact's redaction, a
    recursion, unwrap_envelope asking error_from_envelope) and goes to `inner`; only
    outermost calls are passes, so a second pass added anywhere, in any module, shows
    as a new or larger entry. The model side is left out: toolkit.llm (the offline model
    reads what it is sent), and the loop redacting the model's own reply before it records
    it (`model_side` keeps those arguments, so a test can check none is a tool's data).
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import importlib

        self.passes: Counter = Counter()
        self.inner: Counter = Counter()
        self.model_side: list[Any] = []
        self._local = threading.local()
        homes = [importlib.import_module(name) for name in HOMES]
        originals = {name: getattr(module, name) for module in homes for name in COUNTED
                     if getattr(getattr(module, name, None), "__module__", None) == module.__name__}
        for module in [m for n, m in list(sys.modules.items()) if n == "toolkit" or n.startswith("toolkit.")]:
            if module.__name__.startswith("toolkit.llm"):
                continue
            for name, fn in originals.items():
                if getattr(module, name, None) is fn:
                    monkeypatch.setattr(module, name, self._counting(name, fn, module.__name__))
        real_loads = json.loads

        def loads(text: Any, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("toolkit") and not caller.startswith("toolkit.llm"):
                return self._call("json.loads", caller, real_loads, (text, *args), kwargs)
            return real_loads(text, *args, **kwargs)
        monkeypatch.setattr(json, "loads", loads)

    def _counting(self, name: str, fn: Callable, caller: str) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self._call(name, caller, fn, args, kwargs)
        return wrapper

    def _call(self, name: str, caller: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self.inner[name] += 1
        elif name == "redact_value" and caller == "toolkit.agent.loop":
            self.model_side.append(args[0] if args else None)
        else:
            self.passes[f"{name} in {caller}"] += 1
        self._local.depth = depth + 1
        try:
            return fn(*args, **kwargs)
        finally:
            self._local.depth = depth


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(kind="query")
    def sales_report(region: str) -> dict:
        """销售报表。"""
        return {"status": "ok", "data": {**SALES, "region": region}, "source": ["sales.csv"], "error": None}

    @registry.register
    def weather(city: str) -> PartialResult:
        """天气。"""
        return PartialResult({"上海": "晴"}, "北京的天气接口超时")
    return registry


def _run(replies: list[dict], registry: ToolRegistry | None = None, max_chars: int = 8000, **options: Any):
    client, requests = scripted_client(replies)
    registry = registry or _registry()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("各地区销售额最高的是哪个类别？", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry, result_max_chars=max_chars), **options)
    return run, requests


def test_each_tool_call_is_parsed_once_and_its_data_budgeted_once(monkeypatch):
    arguments = [json.dumps({"region": r}, ensure_ascii=False) for r in ("华东", "华北", "华南")]
    road = Road(monkeypatch)
    run, _ = _run([{"tool_calls": [("sales_report", a) for a in arguments]}, {"content": "显示器，9692。"}])
    assert run.ok and [r.status for r in run.tool_results] == ["success"] * 3
    assert road.passes == {
        "json.loads in toolkit.wire": 3,              # each call read once, where the loop got the reply
        "unwrap_envelope in toolkit.retry": 3,        # each envelope opened once, in the retry loop
        "fit_and_redact in toolkit.executor": 3,      # each result budgeted and redacted once, in the executor
    }
    assert road.inner["error_from_envelope"] == 3 and road.inner["redact_value"] >= 3  # ... inside those passes
    assert all(r.data == {**SALES, "region": r.data["region"]} and r.source == ["sales.csv"] for r in run.tool_results)
    _the_loop_redacted_only_the_models_reply(road, run)


def _the_loop_redacted_only_the_models_reply(road: Road, run: Any) -> None:
    shown = [r.data for r in run.tool_results if r.data is not None]
    for value in road.model_side:
        assert not any(value is data or value == data for data in shown), "the loop redacted a tool's data again"


def _road_registry() -> ToolRegistry:
    """One tool per kind of output the executor meets."""
    registry = _registry()

    @registry.register
    def search_orders(city: str) -> list:
        """订单：119 条，超出 3,000 字符的预算。"""
        return [{"order_id": f"A{i:04d}", "city": city, "status": "已完成"} for i in range(119)]

    @registry.register
    def list_items(city: str) -> dict:
        """约 7,900 字符：在 8,000 的预算之内，却超过 5,000 字符的"太长"线。"""
        return {"items": list(range(1500))}

    @registry.register
    def read_salaries(city: str) -> dict:
        """没有权限：一个不可重试的失败。"""
        raise PermissionError("没有读取工资表的权限")

    @registry.register
    def read_log(city: str) -> str:
        """一段超出预算的文本。"""
        return "2026-05-16 上海 订单同步完成\n" * 600

    @registry.register
    def read_note(city: str) -> str:
        """一段短文本。"""
        return "上海：晴，25 度"

    flaky = iter([TimeoutError("超时"), TimeoutError("超时")])

    @registry.register
    def flaky_report(city: str) -> dict:
        """前两次超时，第三次返回信封。"""
        failure = next(flaky, None)
        if failure is not None:
            raise failure
        return {"status": "ok", "data": {"city": city, "total": 1}, "source": ["sales.csv"], "error": None}
    return registry


def _toolkit_formatter(name: str, call_id: str, result: ToolResult) -> dict:
    """A student's format_message that hands the toolkit's own message on."""
    from toolkit import format_tool_message
    return format_tool_message(name, call_id, result)


def _own_formatter(name: str, call_id: str, result: ToolResult) -> dict:
    """A student's format_message with its own content."""
    return {"role": "tool", "tool_call_id": call_id,
            "content": json.dumps({"status": result.status, "result": result.data}, ensure_ascii=False)}


ONCE = {"json.loads in toolkit.wire": 1, "unwrap_envelope in toolkit.retry": 1, "fit_and_redact in toolkit.executor": 1}
# A decision that makes new data (a summary of a long result the executor did not cut) has it read and budgeted once.
SUMMARY = {"parse_tool_result in toolkit.decisions": 1, "json.loads in toolkit.decisions": 1,
           "fit_and_redact in toolkit.decisions": 1}
# A format_message plug-in's message is tool output: its content budgeted, read and redacted once, in plugin_message.
PLUGIN = {"fit_for_model in toolkit.plugins": 1, "json.loads in toolkit.plugins": 1, "redact_value in toolkit.plugins": 1}


@pytest.mark.parametrize("tool, options, status, action, passes", [
    ("weather", {}, "partial", "present_partial", ONCE),
    ("search_orders", {}, "success", "summarize_and_present", ONCE),      # cut: its data handed on as it is
    ("list_items", {}, "success", "summarize_and_present", {**ONCE, **SUMMARY}),
    ("read_salaries", {}, "error", "report_error", {"json.loads in toolkit.wire": 1}),  # no data, nothing to fit
    ("read_log", {}, "success", "summarize_and_present", ONCE),           # text cut head + tail, once
    ("read_note", {}, "success", "present_directly", ONCE),
    ("flaky_report", {}, "success", "present_directly", ONCE),           # three attempts, one value opened
    ("sales_report", {"format_message": _toolkit_formatter}, "success", "present_directly", {**ONCE, **PLUGIN}),
    ("sales_report", {"format_message": _own_formatter}, "success", "present_directly", {**ONCE, **PLUGIN}),
], ids=["partial", "cut", "long-uncut", "error", "text-cut", "text", "retried", "format_message",
        "format_message-own"])
def test_every_kind_of_result_is_read_once_and_budgeted_once(monkeypatch, tool, options, status, action, passes):
    registry = _road_registry()
    road = Road(monkeypatch)
    run, requests = _run([{"tool_calls": [(tool, '{"city": "上海"}' if tool != "sales_report" else '{"region": "华东"}')]},
                          {"content": "好的。"}], registry, max_chars=3000 if tool == "search_orders" else 8000,
                         **options)
    (result,) = run.tool_results
    assert (result.status, [d["action"] for d in run.decisions]) == (status, [action])
    assert road.passes == passes
    _the_loop_redacted_only_the_models_reply(road, run)
    sent = next(m for m in requests[1]["messages"] if m.get("role") == "tool")["content"]
    assert json.loads(sent)["status"] == status  # the model read the one status


def test_a_cut_result_reaches_the_model_as_the_executor_made_it(monkeypatch):
    """The decision on a cut result hands its data on: not written out as text and read back, not cut again."""
    road = Road(monkeypatch)
    run, requests = _run([{"tool_calls": [("search_orders", '{"city": "上海"}')]}, {"content": "好的。"}],
                         _road_registry(), max_chars=3000)
    (result,) = run.tool_results
    assert result.truncated and run.decisions[0]["data"] is result.data
    assert not [k for k in road.passes if k.endswith("toolkit.decisions")]
    sent = json.loads(next(m for m in requests[1]["messages"] if m.get("role") == "tool")["content"])
    assert sent["result"] == result.data and "（共 119 项）" in json.dumps(sent["result"], ensure_ascii=False)


def _forgets_partial(result: ToolResult, query: str) -> dict:
    """A student's evaluate without the partial branch: a partial result counts as a success."""
    if result.status == "error":
        return {"action": "report_error", "suggestion": "如实告诉用户失败了"}
    return {"action": "present_directly", "suggestion": f"直接依据结果回答：{query}"}


def test_the_decision_reaches_the_model_so_a_student_evaluate_changes_what_it_reads():
    replies = [{"tool_calls": [("weather", json.dumps({"city": "北京"}, ensure_ascii=False))]}, {"content": "上海晴。"}]
    toolkit_run, toolkit_requests = _run(replies)
    student_run, student_requests = _run(replies, evaluate=_forgets_partial)
    silent_run, silent_requests = _run(replies, evaluate=None)

    def read_by_model(requests: list) -> dict:
        tool = next(m for m in requests[1]["messages"] if m.get("role") == "tool")
        return json.loads(tool["content"])

    assert read_by_model(toolkit_requests)["decision"]["action"] == "present_partial"
    assert "缺失" in read_by_model(toolkit_requests)["decision"]["suggestion"]
    assert read_by_model(student_requests)["decision"] == {"action": "present_directly",
                                                           "suggestion": "直接依据结果回答：各地区销售额最高的是哪个类别？"}
    assert "decision" not in read_by_model(silent_requests)
    assert [d["action"] for d in toolkit_run.decisions] == ["present_partial"]
    assert [d["action"] for d in student_run.decisions] == ["present_directly"] and silent_run.decisions == []
    assert read_by_model(toolkit_requests)["status"] == "partial" and "missing" in read_by_model(toolkit_requests)
    assert read_by_model(student_requests)["status"] == "success"        # the loop acted on "present_directly" ...
    assert "missing" not in read_by_model(student_requests)              # ... so the model is not told what is missing


def test_two_evaluate_functions_give_the_offline_model_different_answers():
    """The offline model answers from what it reads: a partial result presented directly reads as complete."""
    registry = _registry()
    answers = []
    for evaluate in (None, _forgets_partial):
        options = {} if evaluate is None else {"evaluate": evaluate}
        with use_clock(SimulatedClock(seed=0)):
            run = run_agent("北京今天天气怎么样？", registry=registry, executor=ToolExecutor(registry=registry), **options)
        answers.append(run.answer)
    assert "缺失部分：北京的天气接口超时" in answers[0]
    assert "缺失" not in answers[1] and answers[0] != answers[1]


def test_an_evaluate_that_takes_next_step_is_told_the_step_left():
    from toolkit import evaluate_tool_result

    replies = [{"tool_calls": [("sales_report", '{"region": "华东"}')]},
               {"tool_calls": [("weather", '{"city": "北京"}')]}, {"content": "好的。"}]
    client, requests = scripted_client(replies)
    registry = _registry()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("先查华东的销售，然后查北京的天气", client=client, model="scripted", registry=registry,
                        evaluate=evaluate_tool_result)
    assert [d["action"] for d in run.decisions] == ["call_more_tools", "present_partial"]
    assert "查北京的天气" in run.decisions[0]["suggestion"]
    two_arguments, _ = _run([{"tool_calls": [("sales_report", '{"region": "华东"}')]}, {"content": "好。"}],
                            evaluate=lambda result, query: {"action": "present_directly"})
    assert [d["action"] for d in two_arguments.decisions] == ["present_directly"]  # no next_step: called with two


def test_a_result_the_executor_cut_is_summarized_as_it_is_with_its_counts():
    from toolkit import evaluate_tool_result

    orders = [{"order_id": f"A{i:04d}", "city": "上海", "status": "已完成"} for i in range(119)]
    with use_clock(SimulatedClock(seed=0)):
        import asyncio
        cut = asyncio.run(ToolExecutor(result_max_chars=3000).execute(lambda: orders, "search_orders"))
    assert cut.truncated is True
    decision = evaluate_tool_result(cut, "已完成的订单有哪些？")
    assert decision["action"] == "summarize_and_present"
    assert decision["data"] is cut.data                       # the executor's view, handed on as it is
    assert "（共 119 项）" in json.dumps(decision["data"], ensure_ascii=False)  # the count is the tool's
    whole = dataclasses.replace(cut, data=orders, truncated=False)
    assert "（共 119 项）" in evaluate_tool_result(whole, "q")["data"]  # long but uncut: summarized once, here


def test_the_transcript_keeps_the_task_context_the_loop_held_without_reading_text_back(monkeypatch):
    from toolkit import TaskContext

    replies = [{"tool_calls": [("sales_report", '{"region": "华东"}')]},
               {"tool_calls": [("weather", '{"city": "北京"}')]}, {"content": "好的。"}]
    client, _ = scripted_client(replies)
    registry = _registry()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("先查华东的销售，然后查北京的天气", client=client, model="scripted", registry=registry)

    def no_parsing(*args: Any) -> None:
        raise AssertionError("the transcript read its own [TASK_CONTEXT] text back")
    monkeypatch.setattr(TaskContext, "parse", classmethod(no_parsing))
    steps = [s for s in run.transcript if s["kind"] == "tool"]
    assert [(s["task_context"].done, len(s["task_context"].steps)) for s in steps] == [(1, 2), (1, 2)]
    assert not steps[0]["content"].startswith("[TASK_CONTEXT]")  # the result's content; the block is in messages
    lines = run.render_transcript().splitlines()
    assert "[任务进度 1/2]" in lines[1] and "[任务进度 1/2]" in lines[3]
    assert run.messages[3]["content"].startswith("[TASK_CONTEXT]")
    rows = run.rows()  # the record's own table rows, read from its ToolResults, not from the message text
    assert [(r["role"], r["tool"], r["outcome"]) for r in rows] == [
        ("模型", "sales_report", None), ("工具", "sales_report", "success"), ("模型", "weather", None),
        ("工具", "weather", "partial"), ("模型", "—", None)]
    assert rows[3]["status"] == "部分成功" and rows[1]["attempts"] == 1 and "9692" in rows[1]["excerpt"]
    assert "[TASK_CONTEXT]" not in "".join(r["excerpt"] for r in rows)


def test_a_tool_result_is_built_once_and_changed_by_replace():
    result = ToolResult("t", {"a": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.data = {}  # type: ignore[misc]
    changed = dataclasses.replace(result, note="由程序补充的说明")
    assert changed.note == "由程序补充的说明" and result.note is None
