"""The answers chapter 01 gives to its 想一想 questions are true of its code and of the toolkit.

Each test reads what the answer in the notebook claims (the text, the count, the number) and compares it with
what the chapter's own cells (the naive parser, the classroom versions) and the toolkit give: a changed cell or
a changed answer that no longer agree fail. The last test shows the second: it rewrites answers to wrong ones."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said

from toolkit import SimulatedClock, ToolExecutor, error_from_envelope, use_clock
from toolkit.results import FATAL, RETRYABLE
from toolkit.tools import analyze_sales_csv

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "01_parse_tool_result.ipynb"
ORDERS = json.loads((ROOT / "data" / "input" / "query_orders_200.json").read_text(encoding="utf-8"))


YOUR_TURN = 'raise NotImplementedError("轮到你")'  # a cell left for the student: the chapter's version follows it


def _cells() -> list[str]:
    """The chapter's code cells, the cells left for the student (轮到你) left out."""
    nb = json.loads(CHAPTER.read_text(encoding="utf-8"))
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return [s for s in sources if YOUR_TURN not in s]


def _run(marker: str, nth: int = 0) -> dict:
    """Run the chapter's nth code cell containing `marker`, in a namespace with json (as the chapter has)."""
    namespace: dict = {"json": json}
    source = [s for s in _cells() if marker in s][nth]
    exec(compile(source.split("\ncheck(")[0], str(CHAPTER), "exec"), namespace)  # the check call comes last
    return namespace


def _classroom_version() -> dict:
    """The chapter's third version with its helpers: the top-level definitions of every cell of step 3 (fit_text,
    parse_tool_result, shrunk, fit_json), run in order."""
    cells = _cells()
    start = next(i for i, s in enumerate(cells) if "def fit_text(" in s)
    end = next(i for i, s in enumerate(cells) if "save(" in s)
    namespace: dict = {"json": json}
    for source in (s for s in cells[start:end] if re.search(r"^def \w+\(", s, re.M)):
        kept = [n for n in ast.parse(source).body if isinstance(n, (ast.Import, ast.FunctionDef, ast.Assign))]
        exec(compile(ast.Module(kept, []), str(CHAPTER), "exec"), namespace)
    return namespace


def _naive():
    return _run("def naive_parse_tool_result(")["naive_parse_tool_result"]


def test_q1_the_naive_parser_reports_a_successful_envelope_as_a_failure():
    text = answer(CHAPTER, 1)
    sales = analyze_sales_csv()
    assert sales["status"] == "ok" and sales["error"] is None
    assert sales["data"]["total_sales"] == number(question(CHAPTER, 1), r"总销售额 (\d+)")
    assert _naive()(sales) == said(text, r"^“([^”]+)”"), "what the answer says the model gets"
    [naive_cell] = [s for s in _cells() if "def naive_parse_tool_result(" in s]
    assert said(text, r"朴素版本写的是 `([^`]+)`") in naive_cell


def _verdict(out: str) -> str:
    return "不可重试" if "不可重试" in out else "可重试" if "可重试" in out else "?"


def test_q2_an_envelope_is_fatal_unless_it_says_retryable_and_a_timeout_exception_is_retryable():
    text = answer(CHAPTER, 2)
    plain = said(text, r"^信封是“(不?可重试)”")
    marked = said(text, r"加上 `\"retryable\": True` 的信封是“(不?可重试)”")
    envelope = {"status": "error", "error": {"code": "TIMEOUT", "message": "上游接口超时"}}
    assert "可重试" in question(CHAPTER, 2) and "TimeoutError" in question(CHAPTER, 2)
    for parse in (_run("def parse_tool_result(", 1)["parse_tool_result"], _classroom_version()["parse_tool_result"]):
        assert _verdict(parse(envelope)) == plain
        assert _verdict(parse({**envelope, "retryable": True})) == marked
        assert _verdict(parse(TimeoutError("查询超时"))) == "可重试"
    assert "error_from_envelope" in text, "the answer says the toolkit keeps the same rule"
    kinds = {"可重试": RETRYABLE, "不可重试": FATAL}
    assert error_from_envelope(envelope).error_type == kinds[plain]
    assert error_from_envelope({**envelope, "retryable": True}).error_type == kinds[marked]


def test_q3_two_hundred_orders_in_500_characters_are_two_orders_and_a_note_in_valid_json():
    text, asked = answer(CHAPTER, 3), question(CHAPTER, 3)
    max_chars = number(asked, r"`max_chars=(\d+)`")
    assert number(asked, r"(\d+) 条订单") == len(ORDERS)
    out = _classroom_version()["parse_tool_result"](ORDERS, max_chars=max_chars)
    shown = json.loads(out)
    assert text.startswith("是合法 JSON") and isinstance(shown, list) and "一个 list" in text
    kept = number(text, r"前 (\d+) 条订单原样保留")
    assert shown[:kept] == ORDERS[:kept] and len(shown) == kept + 1, "the orders kept, then the note"
    assert shown[-1] == said(text, r"最后一项是说明“([^”]+)”")
    assert len(out) <= number(text, r"结果不超过 (\d+) 个字符") == max_chars
    assert str(len(ORDERS)) in shown[-1] and number(text, r"一共有 (\d+) 条") == len(ORDERS)


def test_the_plug_in_error_the_chapter_shows_for_the_naive_parser_reads_as_one_sentence():
    """Section 5's output: the executor refuses the naive parser's 34,419 characters in a sentence a student
    reads without a stray space ('应返回 不超过' before)."""
    import asyncio

    async def go():
        with use_clock(SimulatedClock(seed=0)):
            return await ToolExecutor(parse=_naive(), result_max_chars=600).execute(lambda: ORDERS, "query_orders")
    result = asyncio.run(go())
    assert result.error_code == "PLUGIN_ERROR"
    assert f"返回了 {len(str(ORDERS))} 个字符，应返回 600 个字符以内的结果" in result.error


WRONG_ANSWERS = [
    (1, "“✘ 工具执行失败: None”", "“✘ 工具执行失败: 9692”"),
    (1, "朴素版本写的是 `'error' in result`", "朴素版本写的是 `result.get('error')`"),
    (2, "信封是“不可重试”", "信封是“可重试”"),
    (3, "前 2 条订单原样保留", "前 3 条订单原样保留"),
    (3, "“还有 198 项未显示（共 200 项）”", "“还有 197 项未显示（共 200 项）”"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:12]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
