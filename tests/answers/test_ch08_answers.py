"""The answers chapter 08 gives to its 想一想 questions are true of the chapter's own code.

Each question's code is taken from the chapter's cells (the import cell first, then the cell that defines
what the question is about) and run on the simulated clock, as the chapter runs it."""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from toolkit import SimulatedClock, ToolExecutor, inject_faults, use_clock

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "08_pitfalls.ipynb"


def _code_cells() -> list[str]:
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _chapter(*fragments: str, cut: str | None = None) -> dict:
    """The import cell, then each cell holding a fragment (up to `cut`, when given), run in one namespace."""
    cells = _code_cells()
    namespace: dict = {}
    exec(compile(cells[0], str(CHAPTER), "exec"), namespace)
    for fragment in fragments:
        [source] = [s for s in cells if fragment in s]
        if cut and cut in source:
            source = source.split(cut, 1)[0]
        exec(compile(source, str(CHAPTER), "exec"), namespace)
    return namespace


def _simulated(make):
    async def body():
        with use_clock(SimulatedClock(seed=0)) as clock:
            return await make(), clock.now()
    return asyncio.run(body())


def test_q1_the_course_executor_calls_a_fatal_tool_three_times_and_waits_six_seconds():
    ns = _chapter("class CourseExecutor")

    async def both():
        await ns["CourseExecutor"]().execute(ns["read_report"], "read_report", "财务/工资.xlsx")
        await ns["CourseExecutor"]().execute(ns["query_orders"], "query_orders", "十条")

    _, waited = _simulated(both)
    assert dict(ns["calls"]) == {"read_report": 3, "query_orders": 3} and waited == 6


def test_q2_without_jitter_all_hundred_retries_arrive_together_at_one_second_then_three():
    ns = _chapter("async def stampede", cut="\n\nprint(")
    (arrivals, ok), _ = _simulated(lambda: ns["stampede"]("none"))
    assert Counter(round(t, 6) for t in arrivals) == {0.0: 100, 1.0: 100, 3.0: 100} and ok == 100
    (jittered, _), _ = _simulated(lambda: ns["stampede"]("full"))
    peak = Counter(int(t * 10) for t in jittered if t > 0).most_common(1)[0][1]
    assert peak < 35, "with jitter the retries spread: twenty or thirty per 100 ms at most"


def test_q3_keeping_the_first_2000_characters_loses_the_total_and_the_conclusion():
    ns = _chapter("rng = random.Random(1)", "def course_truncate", cut="\n\ncut = ")
    report = ns["report"]
    cut = ns["course_truncate"](report)
    assert len(report) == 2322 and "本月合计" not in cut and "结论" not in cut
    assert report.index("本月合计") > 2000 and len("\n".join(ns["lines"][-2:])) < 50


def test_faults_are_drawn_per_call_so_retries_move_them_onto_other_queries():
    """Pitfall 6 says: the same seed, run through the executor, fails other queries than the first run."""
    ns = _chapter("async def search(query)", cut="\nwith use_clock")
    search, queries = ns["search"], ns["queries"]

    async def sequence(n):
        tool = inject_faults(search, rates={"timeout": 0.3, "permission": 0.15}, seed=3)
        outcomes = []
        for i in range(n):
            try:
                await tool(f"第 {i + 1} 次")
                outcomes.append("ok")
            except Exception as exc:
                outcomes.append(type(exc).__name__)
        return outcomes

    drawn, _ = _simulated(lambda: sequence(12))

    async def by_executor():
        executor = ToolExecutor(max_retries=2)
        tool = inject_faults(search, rates={"timeout": 0.3, "permission": 0.15}, seed=3)
        for q in queries:
            await executor.execute(tool, "search", q)
        return executor.call_history

    history, _ = _simulated(by_executor)
    attempts = [a.error_code or "ok" for r in history for a in r.trace]
    kinds = {"ok": "ok", "TIMEOUT": "TimeoutError", "PERMISSION_DENIED": "PermissionError"}
    assert [kinds[a] for a in attempts] == drawn[:len(attempts)], "each attempt takes the next draw, whatever the query"
    failed_first = [q for q, outcome in zip(queries, drawn) if outcome != "ok"]
    failed_second = [r.args_summary for r in history if not r.ok]
    assert failed_first == ["上海天气", "上海酒店", "上海博物馆门票"] and failed_second == ["北京飞上海航班"]
    assert history[0].trace[0].error_code == "TIMEOUT" and history[0].ok
