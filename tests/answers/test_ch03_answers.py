"""The answers chapter 03 gives to its 想一想 questions are true of the code: the chapter's own functions (read
from the notebook) and the toolkit. Each test reads the answer's claims (counts, names) from the notebook's
<details>; the last test shows a wrong answer fails. The failure tree is held to the executor too."""
from __future__ import annotations

import ast
import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said
from test_ch03b_answers import fallback_run

from toolkit import (Backoff, HTTPStatusError, RetryBudget, RetryPolicy, SimulatedClock, ToolExecutor,
                     call_tool_with_retry, classify_error, inject_faults, use_clock)
from toolkit.results import UNAVAILABLE_CODES
from toolkit.simulation import BUDGET_CAPACITY, herd_peaks
from toolkit.tools import get_weather as local_weather

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "03_retry.ipynb"


def _cells(kind: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == kind]


def chapter_versions(name: str) -> list:
    """Every definition of `name` in the chapter's code cells, in order, each with the chapter's imports."""
    cells = _cells("code")
    namespace: dict = {}
    exec(cells[0], namespace)  # the setup cell: imports and get_weather
    versions = []
    for source in cells:
        tree = compile(source, "cell", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                exec(compile(ast.Module([node], []), "cell", "exec"), namespace)
                versions.append(namespace[name])
    return versions


async def _weather(city: str) -> str:
    return f"{city}：多云"


def _calls(retry, plan, **kwargs) -> tuple[int, object]:
    async def go():
        with use_clock(SimulatedClock(seed=0)):
            tool = inject_faults(_weather, plan)
            value = await retry(tool, "上海", **kwargs)
            return len(tool.calls), value
    return asyncio.run(go())


def test_q1_max_retries_3_means_4_calls_and_the_original_made_3():
    text, asked = answer(CHAPTER, 1), question(CHAPTER, 1)
    max_retries = number(asked, r"`max_retries=(\d+)`")
    calls = number(text, r"^(\d+) 次：第一次调用 \+ (\d+) 次重试")
    assert number(text, r"^\d+ 次：第一次调用 \+ (\d+) 次重试") == max_retries
    final = chapter_versions("call_tool_with_retry")[-1]
    [naive] = chapter_versions("naive_call_tool_with_retry")
    assert _calls(final, ["timeout"] * 10, max_retries=max_retries)[0] == calls
    assert _calls(call_tool_with_retry, ["timeout"] * 10, max_retries=max_retries)[0] == calls
    assert said(text, r"toolkit 的 `RetryPolicy\(max_retries=(\d+)\)`") == str(max_retries)
    policy = RetryPolicy(max_retries=max_retries)
    assert _calls(lambda tool, city: call_tool_with_retry(tool, city, policy=policy), ["timeout"] * 10)[0] == calls
    try:
        import tenacity
    except ImportError:  # a bench requirement: checked where it is installed
        pass
    else:
        attempts = number(text, r"`stop_after_attempt\((\d+)\)`")
        counted = []
        retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(attempts), wait=tenacity.wait_none(),
                                     reraise=True)
        with pytest.raises(TimeoutError):
            retrying(lambda: counted.append(1) or (_ for _ in ()).throw(TimeoutError()))
        assert len(counted) == attempts == calls
    assert said(text, r"原课程代码用 `([^`]+)`") in next(s for s in _cells("code") if "def naive_call_tool_with_retry" in s)
    count, (_, error) = _calls(naive, ["timeout"] * 10, max_retries=max_retries)
    assert count == number(text, r"把它当成了总次数（(\d+) 次）")
    assert said(text, r"消息却写“([^”]+)”") in error
    assert said(text, r"`max_retries=0` 时循环一次都不执行，函数返回 `(\w+)`") == "None"
    assert _calls(naive, ["timeout"], max_retries=0) == (0, None)  # no pair at all


def test_q2_without_jitter_all_100_clients_retry_in_the_same_100_ms():
    text, asked = answer(CHAPTER, 2), question(CHAPTER, 2)
    clients = number(asked, r"^(\d+) 个客户端同时失败")
    waits = [int(w) for w in said(asked, r"指数退避（([\d、]+) 秒）").split("、")]
    assert Backoff(jitter="none").schedule(len(waits)) == waits
    moments = [int(m) for m in said(text, r"每个客户端都在第 ([\d、]+) 秒重试").split("、")]
    assert moments == [sum(waits[:i + 1]) for i in range(len(waits))]
    peaks = herd_peaks(clients=clients, retries=len(waits))
    assert peaks["none"] == number(text, r"^不带抖动是 (\d+) 个") == clients
    assert "十几个" in text and 10 <= peaks["full"] < 20


def test_the_failure_tree_sends_to_the_fallback_exactly_the_statuses_the_executor_does():
    """The tree (section 1) says 502/503 go to the fallback tool and 500 does not: so does the executor."""
    cell = next(s for s in _cells("markdown") if "工具调用失败" in s and "├──" in s)
    tree = [line for line in cell.splitlines() if line.startswith(("├──", "└──"))]
    to_fallback = {int(c) for line in tree if "换备用工具" in line and "不换备用工具" not in line
                   for c in re.findall(r"\b5\d\d\b", line)}
    not_to_fallback = {int(c) for line in tree if "不换备用工具" in line for c in re.findall(r"\b5\d\d\b", line)}
    assert to_fallback == {502, 503} and not_to_fallback == {500}
    for status in to_fallback | not_to_fallback:
        info = classify_error(HTTPStatusError(status))
        assert info.retryable, f"{status} is retried first, as the tree says"
        assert (info.error_code in UNAVAILABLE_CODES) == (status in to_fallback), status
    _, result = fallback_run(local_weather, writes=False, fault="server_error")
    assert (result.name, result.error_code) == ("weather_primary", "SERVER_ERROR"), "a 500 is not sent to the fallback"


def test_q3_the_default_budget_gives_200_requests_and_chapter_09s_smaller_one_120():
    text, asked = answer(CHAPTER, 3), question(CHAPTER, 3)
    calls, max_retries = number(asked, r"^(\d+) 次调用"), number(asked, r"`max_retries=(\d+)`")
    capacity, cost = number(asked, r"（(\d+) 个令牌，每次重试 (\d+) 个）"), number(asked, r"每次重试 (\d+) 个")
    assert (RetryBudget().capacity, RetryBudget().retry_cost) == (capacity, cost)
    assert BUDGET_CAPACITY == number(text, r"`BUDGET_CAPACITY = (\d+)`")

    async def requests(budget):
        with use_clock(SimulatedClock(seed=0)):
            tool = inject_faults(_weather, rates={"unavailable": 1.0})
            executor = ToolExecutor(max_retries=max_retries, budget=budget)
            for _ in range(calls):
                await executor.execute(tool, "weather", "上海")
            return len(tool.calls)

    counts = [asyncio.run(requests(b)) for b in (None, RetryBudget(), RetryBudget(capacity=BUDGET_CAPACITY))]
    assert counts == [number(asked, r"不加额度是 (\d+) 次请求"), number(text, r"^(\d+) 次："),
                      number(text, r"所以是 \d+ \+ \d+ = (\d+) 次")] == [400, 200, number(asked, r"只有 (\d+) 次尝试")]
    assert number(text, r"500 ÷ 5 = (\d+) 次重试") == capacity // cost
    assert number(text, r"只够 \d+ ÷ \d+ = (\d+) 次重试") == BUDGET_CAPACITY // cost


WRONG_ANSWERS = [
    (1, "4 次：第一次调用", "3 次：第一次调用"),
    (1, "把它当成了总次数（3 次）", "把它当成了总次数（4 次）"),
    (1, "函数返回 `None`", "函数返回 `False`"),
    (2, "不带抖动是 100 个", "不带抖动是 50 个"),
    (2, "第 1、3、7、15 秒", "第 1、2、4、8 秒"),
    (3, "200 次：", "400 次："),
    (3, "`BUDGET_CAPACITY = 100`", "`BUDGET_CAPACITY = 120`"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
