"""The answers chapter 07 gives to its 想一想 questions are true of the chapter's own code.

The student's loop is taken from the chapter's cells, version by version (each defined after the chapter's
import cell and the cell that reads the student's pieces: those chapters 01-07 save), and runs on the student's
executor as in the chapter; the scenarios are the chapter's: the :loop model on the sales question, a weather tool that
always answers HTTP 500 with the :change-arguments model, the :ignore-results model's run traced back."""
from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path

import pytest

from toolkit import HTTPStatusError, SimulatedClock, ToolExecutor, ToolRegistry, use_clock
from toolkit.agent import run_agent
from toolkit.llm import Settings, make_client
from toolkit.tools import data_dir, default_registry
from toolkit.verify import check_answer

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "07_sales_agent.ipynb"
QUESTION = "哪个类别销售额最高？总销售额是多少？"
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def _code_cells() -> list[str]:
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _chapter(source: str) -> dict:
    """`source` run after the chapter's import cell and the cell that reads the student's pieces (`my`) and
    defines tool_message, as the notebook runs it."""
    cells = _code_cells()
    pieces = next(c for c in cells if re.search(r"^def tool_message\(", c, re.M))
    namespace: dict = {}
    exec(compile(cells[0] + "\n" + pieces + "\n" + source, str(CHAPTER), "exec"), namespace)
    return namespace


def versions() -> list:
    """The chapter's run_my_agent, version by version."""
    return [_chapter(source)["run_my_agent"] for source in _code_cells()
            if re.search(r"^async def run_my_agent\(", source, re.M)]


def executor(**settings):
    """The executor the chapter runs its loop on: the student's own from chapter 06 (`my.executor`)."""
    return _chapter("")["my"].executor(**settings)


def _offline(variant: str):
    return make_client(Settings(base_url=None, model=f"offline-stand-in:{variant}", offline=True))


def _run(coroutine):
    async def body():
        with use_clock(SimulatedClock(seed=0)):
            return await coroutine
    return asyncio.run(body())


def _broken() -> tuple[ToolRegistry, list[str]]:
    tried: list[str] = []

    def get_weather(city: str) -> dict:
        """查询某个城市今天的天气。"""
        tried.append(city)
        raise HTTPStatusError(500, "天气服务内部错误")

    registry = ToolRegistry()
    registry.register(get_weather)
    return registry, tried


def test_q1_the_first_version_runs_a_repeated_call_every_turn_and_answers_none_run_agent_runs_it_once():
    client, model = _offline("loop")
    mine = executor(registry=default_registry())
    answer, _ = _run(versions()[0](QUESTION, client, model, mine, max_turns=4))
    assert answer is None and len(mine.call_history) == 4
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, client=client, model=model, max_turns=4)
    assert sum(1 for r in run.tool_results if r.attempts) == 1 and run.repeated_calls == 3


def test_q2_sixteen_requests_with_new_arguments_each_turn_which_the_repeat_rule_does_not_catch():
    client, model = _offline("change-arguments")
    registry, tried = _broken()
    answer, _ = _run(versions()[0]("上海今天天气怎么样？", client, model, executor(registry=registry, max_retries=1),
                                   max_turns=8))
    assert answer is None and len(tried) == 16 == 8 * 2
    per_turn = tried[::2]
    assert all(a != b for a, b in zip(per_turn, per_turn[1:])), "the model rewords its arguments every turn"
    assert per_turn[:3] == ["上海", "上海市", "上海（中国）"]
    registry, tried = _broken()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("上海今天天气怎么样？", client=client, model=model, max_turns=8, max_tool_failures=None,
                        executor=ToolExecutor(registry=registry, max_retries=1))
    assert run.repeated_calls == 0 and len(tried) == 16, "without the failure limit, the repeat rule lets all run"
    assert all(r.error_type == "retryable" for r in run.tool_results), "500 is transient: even a repeat may run"


def test_q2_the_second_version_and_run_agent_stop_after_three_failures():
    client, model = _offline("change-arguments")
    registry, tried = _broken()
    answer, _ = _run(versions()[-1]("上海今天天气怎么样？", client, model, executor(registry=registry, max_retries=1),
                                    max_turns=8))
    assert len(tried) == 6 and "失败" in answer


def test_q3_the_trace_stops_at_the_model_tool_message_and_tool_result_agree_with_the_hand_count():
    client, model = _offline("ignore-results")
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, client=client, model=model)
    verdict = check_answer(run.answer, *run.tool_results, question=QUESTION)
    assert not verdict.ok and 14577 in verdict.unsupported_numbers and "14577" in run.answer
    sent = json.loads(next(m["content"] for m in run.messages if m["role"] == "tool"))
    assert sent["result"]["total_sales"] == run.tool_results[0].data["total_sales"] == 9692
    with open(data_dir() / "sales.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    by_hand = sum(int(r["quantity"]) * int(r["unit_price"]) for r in rows)
    monitors = sum(int(r["quantity"]) * int(r["unit_price"]) for r in rows if r["category"] == "显示器")
    assert (by_hand, monitors) == (9692, 4495)


def test_every_row_of_the_troubleshooting_table_is_reproduced_with_what_the_student_sees():
    """Section 10 (optional) claims each row of the table is reproduced; the stored outputs (nbval compares them
    with a fresh run) show the symptom the row names."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    start = next(i for i, c in enumerate(cells) if "## 10. 选读 · 排错" in "".join(c["source"]))
    end = next(i for i, c in enumerate(cells) if "## 11. 选读" in "".join(c["source"]))
    shown = "\n".join("".join(o.get("text", "")) for c in cells[start:end] if c["cell_type"] == "code"
                      for o in c["outputs"])
    assert "finish_reason: stop ；tool_calls: None" in shown                       # the model did not call the tool
    assert "① 什么都没追加 → finish_reason: tool_calls" in shown                    # the tool ran, the model never saw it
    assert "② 漏了 tool 消息 → HTTP 400" in shown and "tool 消息，缺少 call_" in shown
    assert shown.count("ConfigError：") == 2 and "占位文字" in shown and "https://" in shown   # a bad .env file
    assert "认证失败（HTTP 401）" in shown
    assert "模型没有返回文本回答（finish_reason=length）" in shown                  # the reply has no text
    assert "结束方式： max_turns" in shown
    dotenv_cell = next("".join(c["source"]) for c in cells[start:end] if "bad_dotenvs" in "".join(c["source"]))
    assert "tempfile.TemporaryDirectory()" in dotenv_cell and "dotenv_path=dotenv" in dotenv_cell
