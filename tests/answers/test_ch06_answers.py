"""The answers chapter 06 gives to its 想一想 questions are true of the chapter's code and of the toolkit; the
chapter's classes are built on the pieces chapters 01-03 save (`chapters_my_toolkit`), as in the chapter."""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, inject_faults, use_clock
from toolkit.agent import run_agent
from toolkit.tools import analyze_sales_csv, data_dir, default_registry

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "06_executor.ipynb"
ORDERS = json.loads((data_dir() / "orders.json").read_text(encoding="utf-8"))["orders"]
QUESTION = "哪个类别销售额最高？总销售额是多少？"
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def chapter() -> dict:
    """The chapter's class cells (imports and classes only), run as the notebook runs them."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    source = "\n\n".join("".join(c["source"]) for c in cells
                         if c["cell_type"] == "code" and re.search(r"^class \w+", "".join(c["source"]), re.M))
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


def test_q4_history_keeps_the_last_three_while_the_summary_counts_all_five():
    found = chapter()

    async def ok(*args):
        return "结果"

    async def denied(*args):
        raise PermissionError("没有权限")

    async def five():
        mine = found["RecordingExecutor"](history_limit=3)
        for i, tool in enumerate([ok, denied, ok, ok, ok]):
            await mine.execute(tool, f"tool_{i}")
        return mine

    mine, _ = run(five)
    assert [r.name for r in mine.call_history] == ["tool_2", "tool_3", "tool_4"]
    summary = mine.get_summary()
    assert summary["total_calls"] == 5 and summary["success_rate"] == 0.8


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


def test_q6_only_the_valid_call_runs_the_other_three_are_refused_with_zero_attempts():
    def call(name, arguments, call_id):
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    calls = [call("get_weather", '{"city": "上海"}', "call_1"), call("get_weather", '{"city": "纽约"}', "call_2"),
             call("get_stock_price", '{"code": "600519"}', "call_3"), call("get_weather", '{"city": "上海"', "call_4")]
    results, _ = run(lambda: ToolExecutor(registry=default_registry()).run_tool_calls(calls))
    assert [r.attempts for r in results] == [1, 0, 0, 0]
    assert [str(r.error_code) if r.error_code else None for r in results] == [
        None, "INVALID_ARGUMENTS", "UNKNOWN_TOOL", "INVALID_ARGUMENTS_JSON"]
    assert results[0].ok
