"""The answers chapter 07 gives to its 想一想 questions are true of the chapter's own code.

The student's loop is taken from the chapter's cells, version by version (each defined after the chapter's
import cell and the cell that reads the student's pieces: those chapters 01-07 save), and runs on the student's
executor as in the chapter; the scenarios are the chapter's: the :loop model on the sales question, a weather tool that
always answers HTTP 500 with the :change-arguments model, and what int() and the sales tool make of bad numbers.
The 轮到你 cells (the student's, with a placeholder) are not the chapter's versions."""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from notebook_answers import answer

from toolkit import HTTPStatusError, SimulatedClock, ToolExecutor, ToolRegistry, use_clock
from toolkit.agent import run_agent
from toolkit.llm import Settings, make_client
from toolkit.tools import analyze_sales_csv, data_dir, default_registry

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "07_sales_agent.ipynb"
QUESTION = "哪个类别销售额最高？总销售额是多少？"
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def _code_cells() -> list[str]:
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells
            if c["cell_type"] == "code" and "your-turn" not in c["metadata"].get("tags", [])]


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


def test_q3_int_refuses_only_abc_the_sales_tool_refuses_all_four_naming_their_lines():
    said = answer(CHAPTER, 3)
    assert "只拒绝 `abc`" in said and "四个都拒绝" in said
    taken = {}
    for text in ("abc", "+8", "1_2", "２０"):
        try:
            taken[text] = int(text)
        except ValueError:
            taken[text] = None
    assert taken == {"abc": None, "+8": 8, "1_2": 12, "２０": 20}
    for text, value in taken.items():
        if value is not None:
            assert f'`int("{text}")` 是 {value}' in said
    faults = data_dir().parent / "faults" / "sales"
    cases = {c["file"]: c for c in json.loads((faults / "cases.json").read_text(encoding="utf-8"))["cases"]}
    for name in ("quantity_abc.csv", "plus_sign.csv", "underscore_number.csv", "fullwidth_digits.csv"):
        error = analyze_sales_csv(name, data_dir=faults)["error"]
        assert error["code"] == "INVALID_SALES_CSV" and error["line"] == cases[name]["line"]
        assert f"第 {cases[name]['line']} 行" in error["message"]


def test_the_rules_the_chapter_lists_are_what_the_fault_files_break():
    """Section 8 lists what the sales tool checks before computing; each of the 15 bad files is refused, and the
    list names the missing file, the header's three columns and the plain-digits rule the tool's messages state."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    rules = next("".join(c["source"]) for c in cells if "## 8. 工具在计算之前检查什么" in "".join(c["source"]))
    assert all(f"{n}. **" in rules for n in range(1, 8))
    assert "FILE_NOT_FOUND" in rules and "PATH_NOT_ALLOWED" in rules and "0-9" in rules
    faults = data_dir().parent / "faults" / "sales"
    cases = json.loads((faults / "cases.json").read_text(encoding="utf-8"))["cases"]
    assert len(cases) == 15 and "15 个坏文件" in rules
    assert all(analyze_sales_csv(c["file"], data_dir=faults)["error"]["code"] == c["code"] for c in cases)
    assert analyze_sales_csv("no_such.csv")["error"]["code"] == "FILE_NOT_FOUND"
    assert analyze_sales_csv("../sales.csv")["error"]["code"] == "PATH_NOT_ALLOWED"
