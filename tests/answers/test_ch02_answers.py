"""The answers chapter 02 gives to its 想一想 questions are true of the chapter's own code.

Each version of the student's smart_truncate is taken from the chapter's cells (the cells defining it run
alone: they need nothing but builtins), REPORT from its first code cell."""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from toolkit import SimulatedClock, ToolExecutor, use_clock

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "02_smart_truncate.ipynb"
MARKER = re.compile(r"\n…（已省略 (-?\d+) 字符）…\n")


def _code_cells() -> list[str]:
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def versions() -> list:
    """The chapter's smart_truncate, version by version, in the order the chapter writes them."""
    found = []
    for source in _code_cells():
        if re.search(r"^def smart_truncate\(", source, re.M):
            definition = source.split("\n\ncheck(", 1)[0]  # the definition, without the cell's check call
            namespace: dict = {}
            exec(compile(definition, str(CHAPTER), "exec"), namespace)
            found.append(namespace["smart_truncate"])
    return found


def report() -> str:
    namespace: dict = {}
    exec(compile(_code_cells()[0], str(CHAPTER), "exec"), namespace)
    return namespace["REPORT"]


def test_the_chapter_writes_six_versions():
    assert len(versions()) == 6


def test_q1_head_only_loses_the_total_that_starts_at_5753():
    text, first = report(), versions()[0]
    assert text.index("总计：9692") == 5753 > 300
    out = first(text, 600, 300, 200)
    assert "总计：9692" not in out and out.startswith("季度销售报告")


def test_q2_the_old_count_after_moving_the_cuts_is_too_small_5260_against_5283():
    text, third = report(), versions()[2]
    out = third(text, 600, 300, 200)
    head, claimed, tail = MARKER.split(out)
    really = len(text) - len(head) - len(tail)
    assert (int(claimed), really) == (5260, 5283)
    for size in ((1000, 500, 400), (3000, 2000, 800)):  # never too large: the cuts only move inwards
        head, claimed, tail = MARKER.split(third(text, *size))
        assert int(claimed) <= len(text) - len(head) - len(tail)


def test_q3_impossible_sizes_give_a_negative_count_and_a_longer_output():
    fourth, fifth = versions()[3], versions()[4]
    lines = "".join(f"第 {i:03d} 行：订单明细\n" for i in range(1, 801))[:8500]
    out = fourth(lines, max_chars=8000, keep_head=4000, keep_tail=5000)
    assert MARKER.search(out).group(1) == "-480"
    assert (len(lines), len(out), out.count("第 300 行")) == (8500, 8997, 2)
    try:
        fifth(lines, max_chars=8000, keep_head=4000, keep_tail=5000)
    except ValueError as exc:
        assert "把 keep_head 或 keep_tail 调小" in str(exc)
    else:
        raise AssertionError("the fifth version raises ValueError for impossible sizes")


def _read_through(truncate, text: str):
    async def run():
        with use_clock(SimulatedClock(seed=0)):
            return await ToolExecutor(truncate=truncate, result_max_chars=300).execute(lambda: text, "read_report")
    return asyncio.run(run())


def test_q4_the_fifth_version_with_two_arguments_is_a_plugin_error_the_model_reads():
    text, fifth, final = report(), versions()[4], versions()[5]
    result = _read_through(fifth, text)
    assert (result.status, result.error_code) == ("error", "PLUGIN_ERROR")
    assert "4000 + 2000" in result.error and "把 keep_head 或 keep_tail 调小" in result.error
    assert result.data is None
    fixed = _read_through(final, text)
    assert fixed.status == "success" and "总计：9692" in fixed.data and len(fixed.data) <= 300
