"""The answers appendix 01b gives to its 想一想 questions are true of its code and of the toolkit.

Each test reads what the answer in the notebook claims (valid JSON or not, a token count, which fields survive, how
many records are read) and compares it with what the appendix's own cells and the toolkit give; the last test shows
that a rewritten, wrong answer fails."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said

from toolkit import estimate_tokens, parse_tool_result

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "01b_parse_tool_result_more.ipynb"
DATA = ROOT / "data" / "input"
ORDERS = json.loads((DATA / "query_orders_200.json").read_text(encoding="utf-8"))
PAGE = (DATA / "web_page_long.txt").read_text(encoding="utf-8")


def _code_cells() -> list[str]:
    nb = json.loads(CHAPTER.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _fit_text():
    """The appendix's copy of chapter 01's fit_text, from its first code cell (the data loading left out)."""
    source = _code_cells()[0]
    namespace: dict = {}
    exec(compile(source[source.index("def fit_text("):], str(CHAPTER), "exec"), namespace)
    return namespace["fit_text"]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_the_appendix_copies_chapter_01s_fit_text():
    chapter = (ROOT / "notebooks" / "01_parse_tool_result.ipynb").read_text(encoding="utf-8")
    cells = ["".join(c["source"]) for c in json.loads(chapter)["cells"] if c["cell_type"] == "code"]
    [ours] = [s for s in cells if "def fit_text(" in s]
    body = ours[ours.index("    if len(text)"):].split("\n\n\n")[0]
    assert body in _code_cells()[0], "the appendix's fit_text is the chapter's, line for line"


def test_q1_the_classroom_cut_breaks_json_text_and_spends_four_times_the_tokens_on_chinese():
    text, asked = answer(CHAPTER, 1), question(CHAPTER, 1)
    budget = number(asked, r"课堂版（(\d+) 个字符）")
    fit_text = _fit_text()
    json_text = (DATA / "query_orders_200.json").read_text(encoding="utf-8")
    assert text.startswith("不是合法 JSON") and not _is_json(fit_text(json_text, budget))
    spent = estimate_tokens(fit_text(PAGE, budget))
    assert spent == number(text, r"中文网页约 (\d+) tokens")
    tokens = number(text, r"是 (\d+) tokens 预算的")
    assert tokens * 4 == budget and round(spent / tokens) == number(text, r"差不多是 \d+ tokens 预算的(.)倍")
    toolkit = parse_tool_result(json_text, max_tokens=tokens), parse_tool_result(PAGE, max_tokens=tokens)
    assert all(estimate_tokens(out) <= tokens for out in toolkit) and _is_json(toolkit[0])
    assert "JSON 仍然合法" in text


def _hit() -> dict:
    source = next(s for s in _code_cells() if "hit = {" in s)
    namespace: dict = {"page": PAGE}
    exec(compile(source.split("\n\nonly_budget")[0], str(CHAPTER), "exec"), namespace)
    return namespace["hit"]


def test_q2_the_budget_alone_keeps_the_tracking_and_loses_the_price_picking_fields_keeps_the_price():
    text, asked = answer(CHAPTER, 2), question(CHAPTER, 2)
    budget = number(asked, r"预算 (\d+) tokens")
    hit = _hit()
    only_budget = parse_tool_result(hit, max_tokens=budget)
    assert text.startswith("售价不在，追踪信息在")
    assert "5999" not in only_budget and "ad_slots" in only_budget
    picked = {"title": hit["title"], "url": hit["url"], "content": _fit_text()(hit["content"], 700)}
    combined = parse_tool_result(picked, max_tokens=budget)
    assert "5999" in combined and "ad_slots" not in combined
    assert "售价就回来了，追踪信息也没了" in text
    for field in said(text, r"先提取 ((?:`\w+`、?)+)").replace("`", "").split("、"):
        assert field in picked


class _CountingList(list):
    touched = 0

    def __iter__(self):
        for item in super().__iter__():
            _CountingList.touched += 1
            yield item


def _naive():
    chapter = ROOT / "notebooks" / "01_parse_tool_result.ipynb"
    cells = ["".join(c["source"]) for c in json.loads(chapter.read_text(encoding="utf-8"))["cells"]]
    namespace: dict = {"json": json}
    exec(next(s for s in cells if s.startswith("def naive_parse_tool_result(")), namespace)
    return namespace["naive_parse_tool_result"]


def test_q3_the_toolkit_reads_122_records_whatever_the_input_size():
    text, asked = answer(CHAPTER, 3), question(CHAPTER, 3)
    sizes = (number(asked, r"从 (\d+) 条订单"), number(asked, r"涨到 (\d+) 万条") * 10_000)
    assert sizes == (200, 200_000)
    seen = []
    for n in (sizes[0], 2_000, sizes[1]):  # the sizes the cell runs
        data = _CountingList(ORDERS[i % 200] for i in range(n))
        _CountingList.touched = 0
        parse_tool_result(data)
        seen.append(_CountingList.touched)
    assert seen == [number(text, r"每种规模都只读 (\d+) 条")] * 3
    tens_of_millions = number(text, r"20 万条就是(.)千多万个字符")
    big = len(_naive()([ORDERS[i % 200] for i in range(sizes[1])]))
    assert tens_of_millions * 10_000_000 <= big < (tens_of_millions + 1) * 10_000_000, big


WRONG_ANSWERS = [
    (1, "不是合法 JSON 了", "仍是合法 JSON"),
    (1, "中文网页约 1865 tokens", "中文网页约 500 tokens"),
    (1, "差不多是 500 tokens 预算的四倍", "差不多是 500 tokens 预算的两倍"),
    (2, "售价不在，追踪信息在", "售价在，追踪信息不在"),
    (3, "每种规模都只读 122 条", "每种规模都只读 200 条"),
    (3, "三千多万个字符", "五千多万个字符"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:12]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
