"""The road goes one way: each tool call is read once, its data budgeted once, its decision reaches the model.

Counted, not assumed: the tests wrap the toolkit's own functions wherever a
module holds them, so a second pass added anywhere on the road fails here.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from typing import Any, Callable

import pytest
from support import scripted_client

from toolkit import PartialResult, SimulatedClock, ToolExecutor, ToolRegistry, ToolResult, use_clock
from toolkit.agent import run_agent

SALES = {"highest_category": "显示器", "total_sales": 9692,
         "category_sales": [{"category": "显示器", "sales": 4495}, {"category": "键盘", "sales": 2985}]}


def _count(monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...]) -> Counter:
    """Wrap each named toolkit function in every toolkit module that imported it; count the calls.

    The module that defines a function keeps the original, so its own inner calls
    (a recursion, one helper calling the next) are not counted: only the road's.
    """
    import toolkit.fitting
    import toolkit.parsing
    import toolkit.results
    import toolkit.safety
    import toolkit.shrink

    homes = (toolkit.fitting, toolkit.parsing, toolkit.results, toolkit.safety, toolkit.shrink)
    counts: Counter = Counter()
    originals = {name: getattr(module, name) for module in homes for name in names if hasattr(module, name)}

    def counting(name: str, fn: Callable, caller: str) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            counts[f"{name} in {caller}"] += 1
            return fn(*args, **kwargs)
        return wrapper

    for module in [m for n, m in sys.modules.items() if n == "toolkit" or n.startswith("toolkit.")]:
        for name, fn in originals.items():
            if getattr(module, name, None) is fn and module.__name__ != fn.__module__:
                monkeypatch.setattr(module, name, counting(name, fn, module.__name__))
    return counts


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


def _run(replies: list[dict], **options: Any):
    client, requests = scripted_client(replies)
    registry = _registry()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("各地区销售额最高的是哪个类别？", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry), **options)
    return run, requests


def test_each_tool_call_is_parsed_once_and_its_data_budgeted_once(monkeypatch):
    arguments = [json.dumps({"region": r}, ensure_ascii=False) for r in ("华东", "华北", "华南")]
    decoded: Counter = Counter()
    real_loads = json.loads

    def loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        if text in arguments:
            decoded[text] += 1
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", loads)
    counts = _count(monkeypatch, ("fit_and_redact", "fit_for_model", "shrink_json", "parse_tool_result",
                                  "unwrap_envelope", "error_from_envelope", "redact_value"))
    run, _ = _run([{"tool_calls": [("sales_report", a) for a in arguments]}, {"content": "显示器，9692。"}])
    assert run.ok and [r.status for r in run.tool_results] == ["success"] * 3
    assert decoded == {a: 1 for a in arguments}          # read once, where the loop got the reply
    assert counts["fit_and_redact"] == 3                  # budgeted and redacted once, in the executor
    assert counts["redact_value in toolkit.fitting"] == 3  # (the redaction inside fit_and_redact) ...
    assert not [k for k in counts if k.startswith("redact_value in toolkit.messages")]  # ... not again in the message
    assert counts["fit_for_model"] == 0 and counts["shrink_json"] == 0 and counts["parse_tool_result"] == 0
    assert counts["unwrap_envelope"] == 3                 # the envelope opened once, in the retry loop ...
    assert counts["error_from_envelope"] == 0             # ... and not looked into again anywhere
    assert all(r.data == {**SALES, "region": r.data["region"]} and r.source == ["sales.csv"] for r in run.tool_results)


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
    assert json.loads(decision["data"]) == cut.data          # the executor's view, not cut a second time
    assert "（共 119 项）" in decision["data"]                  # so the count is the tool's, not the first cut's
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


def test_a_tool_result_is_built_once_and_changed_by_replace():
    result = ToolResult("t", {"a": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.data = {}  # type: ignore[misc]
    changed = dataclasses.replace(result, note="由程序补充的说明")
    assert changed.note == "由程序补充的说明" and result.note is None
