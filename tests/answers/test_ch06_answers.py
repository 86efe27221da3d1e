"""The answers chapter 06 gives to its 想一想 questions are true of the chapter's code and of the toolkit; the
chapter's classes are built on the pieces chapters 01-03 save (`chapters_my_toolkit`), as in the chapter."""
from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, said

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, inject_faults, use_clock
from toolkit.agent import run_agent
from toolkit.tools import analyze_sales_csv, data_dir, default_registry

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "06_executor.ipynb"
ORDERS = json.loads((data_dir() / "orders.json").read_text(encoding="utf-8"))["orders"]
QUESTION = "哪个类别销售额最高？总销售额是多少？"
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def chapter() -> dict:
    """The chapter's classes and the helper functions they call (imports, classes, functions; their check(…) calls
    left out), run as the notebook runs them; the your-turn cells, which the student fills in, skipped."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    source = "\n\n".join("".join(c["source"]).split("\ncheck(")[0] for c in cells
                         if c["cell_type"] == "code" and "your-turn" not in c["metadata"].get("tags", [])
                         and re.search(r"^(class \w+|def (make_result|fit_to_budget)\()", "".join(c["source"]), re.M))
    namespace = {"__name__": "chapter_06"}
    exec(compile(source, "06_executor.ipynb", "exec", dont_inherit=True), namespace)
    return namespace


def run(coro_fn, seed: int = 0):
    clock = SimulatedClock(seed=seed)

    async def body():
        with use_clock(clock):
            return await coro_fn()

    return asyncio.run(body()), clock


def test_q1_the_naive_executor_calls_a_permission_error_three_times_and_waits_one_then_two_seconds():
    calls = []

    async def read_finance(path):
        from toolkit import get_clock
        calls.append(get_clock().now())
        raise PermissionError(f"没有访问 {path} 的权限")

    result, clock = run(lambda: chapter()["NaiveToolExecutor"](max_retries=3).execute(read_finance, "r", "x.csv"))
    assert calls == [0.0, 1.0, 3.0]
    assert clock.sleeps == [1, 2] and clock.now() == 3.0
    assert "权限" in result.error


def test_q2_the_naive_executor_runs_a_sync_tool_three_times_and_fails_on_await():
    runs = []

    def counted_sales():
        runs.append(1)
        return analyze_sales_csv()

    result, _ = run(lambda: chapter()["NaiveToolExecutor"]().execute(counted_sales, "analyze_sales_csv"))
    assert len(runs) == 3
    assert result.data is None and "await" in result.error


def test_q3_a_budgeted_long_list_stays_a_list_of_whole_records_ending_with_a_count():
    async def search_orders():
        return ORDERS

    result, _ = run(lambda: chapter()["BudgetExecutor"](result_max_chars=2000).execute(search_orders, "search_orders"))
    assert isinstance(result.data, list)
    *records, last = result.data
    assert records and all(r in ORDERS for r in records)
    assert re.fullmatch(r"还有 \d+ 项未显示（共 200 项）", last), last  # chapter 01's fit_json wrote it
    assert len(json.dumps(result.data, ensure_ascii=False)) <= 2000
    assert result.truncated is True and result.artifact == ORDERS


def test_q4_a_batch_with_one_failing_call_answers_every_call_in_order_and_runs_the_others():
    """The parallel-call case: three calls in one turn, the middle one fails; the answer's claims."""
    from toolkit.wire import ToolCall

    said_here = answer(CHAPTER, 4)
    batch = [ToolCall("call_1", "get_weather", '{"city": "北京"}'),
             ToolCall("call_2", "analyze_sales_csv", '{"path": "sales_2027.csv"}'),
             ToolCall("call_3", "get_weather", '{"city": "上海"}')]
    results, _ = run(lambda: chapter()["MyExecutor"](registry=default_registry()).run_tool_calls(batch))
    assert len(results) == number(said_here, r"交回 (\d+) 个结果") == 3
    assert [r.call_id for r in results] == ["call_1", "call_2", "call_3"]  # 顺序和调用一样
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error_code == said(said_here, r"第二个是错误结果（`(\w+)`）") == "FILE_NOT_FOUND"
    assert results[0].attempts == results[2].attempts == 1  # the others ran
    # the toolkit's executor hands the same batch back in call order too
    theirs, _ = run(lambda: ToolExecutor(registry=default_registry()).run_tool_calls(batch))
    assert [(r.call_id, r.ok) for r in theirs] == [(r.call_id, r.ok) for r in results]


def _sales_run(executor):
    sales = default_registry().get("analyze_sales_csv")
    registry = ToolRegistry()
    registry.register(inject_faults(analyze_sales_csv, ["timeout", "timeout", "ok"]), name=sales.name,
                      description=sales.description, parameters=sales.parameters)
    with use_clock(SimulatedClock(seed=0)):
        agent_run = run_agent(QUESTION, registry=registry, executor=executor)
    [message] = [m for m in agent_run.messages if m["role"] == "tool"]
    return agent_run, message["content"]


def test_q5_without_retries_the_model_reads_the_timeout_and_gives_no_figures_with_three_it_answers_4495_and_9692():
    found = chapter()
    none = found["MyExecutor"](max_retries=0)
    agent_run, content = _sales_run(none)
    assert '"status": "error"' in content and "TIMEOUT" in content
    assert "失败" in agent_run.answer and not re.search(r"4495|9692", agent_run.answer)

    three = found["MyExecutor"](max_retries=3)
    agent_run, content = _sales_run(three)
    assert '"status": "success"' in content
    assert "显示器" in agent_run.answer and "4495" in agent_run.answer and "9692" in agent_run.answer
    assert three.get_summary()["retries"] == 2


WRONG_ANSWERS = [(4, "交回 3 个结果", "交回 2 个结果"), (4, "第二个是错误结果（`FILE_NOT_FOUND`）", "第二个是错误结果（`TIMEOUT`）")]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
