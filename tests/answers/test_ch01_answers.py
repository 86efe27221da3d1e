"""The answers chapter 01 gives to its 想一想 questions are true of its code and of the toolkit.

The chapter's own cells are run here (the naive parser, the classroom versions), so an answer that a change
to a cell makes false fails."""
from __future__ import annotations

import json
from pathlib import Path

from toolkit import error_from_envelope, parse_tool_result
from toolkit.results import FATAL, RETRYABLE
from toolkit.tools import analyze_sales_csv

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "01_parse_tool_result.ipynb"
ORDERS = json.loads((ROOT / "data" / "input" / "query_orders_200.json").read_text(encoding="utf-8"))


def _cells() -> list[str]:
    nb = json.loads(CHAPTER.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _run(marker: str, nth: int = 0) -> dict:
    """Run the chapter's nth code cell containing `marker`, in a namespace with json (as the chapter has)."""
    namespace: dict = {"json": json}
    source = [s for s in _cells() if marker in s][nth]
    exec(compile(source.split("\ncheck(")[0], str(CHAPTER), "exec"), namespace)  # the check call comes last
    return namespace


def test_q1_the_naive_parser_reports_a_successful_envelope_as_a_failure():
    sales = analyze_sales_csv()
    assert sales["status"] == "ok" and sales["error"] is None and sales["data"]["total_sales"] == 9692
    naive = _run("def naive_parse_tool_result(")["naive_parse_tool_result"]
    assert naive(sales) == "❌ 工具执行失败: None"


def test_q2_an_envelope_is_fatal_unless_it_says_retryable_and_a_timeout_exception_is_retryable():
    envelope = {"status": "error", "error": {"code": "TIMEOUT", "message": "上游接口超时"}}
    for nth in (1, 2):  # the second step and the final version
        parse = _run("def parse_tool_result(", nth)["parse_tool_result"]
        assert "（不可重试）" in parse(envelope)
        assert "（可重试）" in parse({**envelope, "retryable": True})
        assert "（可重试）" in parse(TimeoutError("查询超时"))
    assert error_from_envelope(envelope).error_type == FATAL, "the toolkit keeps the same rule"
    assert error_from_envelope({**envelope, "retryable": True}).error_type == RETRYABLE


def test_q3_two_hundred_orders_in_500_characters_are_two_orders_and_a_note_in_valid_json():
    parse = _run("def parse_tool_result(", 2)["parse_tool_result"]
    text = parse(ORDERS, max_chars=500)
    shown = json.loads(text)
    assert len(text) <= 500
    assert shown[:2] == ORDERS[:2] and len(shown) == 3
    assert shown[-1] == "还有 198 项未显示（共 200 项）"


def test_q4_the_toolkit_reads_122_records_whatever_the_input_size():
    class CountingList(list):
        touched = 0

        def __iter__(self):
            for item in super().__iter__():
                CountingList.touched += 1
                yield item

    seen = []
    for n in (200, 2_000, 200_000):
        data = CountingList(ORDERS[i % 200] for i in range(n))
        CountingList.touched = 0
        parse_tool_result(data)
        seen.append(CountingList.touched)
    assert seen == [122, 122, 122]
