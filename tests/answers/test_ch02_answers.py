"""The answers chapter 02 gives to its 想一想 questions are true of the chapter's own code.

Each version of the student's smart_truncate is taken from the chapter's cells (the cells defining it run
alone: they need nothing but builtins), REPORT from its first code cell. Each test reads the claims of the
answer in the notebook (the check that fails, the counts, the error) and compares them with what the code
gives; the last test shows that a wrong answer fails."""
from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.check import get_exercise
from toolkit.check._ch02 import SIZES
from toolkit.check._core import Fail

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "02_smart_truncate.ipynb"
MARKER = re.compile(r"\n…（已省略 (-?\d+) 字符）…\n")
CHECKS = {c.id: c for c in get_exercise("ch02").checks}


YOUR_TURN = 'raise NotImplementedError("轮到你")'  # a cell left for the student: the chapter's version follows it


def _code_cells() -> list[str]:
    """The chapter's code cells, the cells left for the student (轮到你) left out."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return [s for s in sources if YOUR_TURN not in s]


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


def _only_after(marker: str) -> list[str]:
    """The check ids of the chapter's check(…, only=[…]) call in the first code cell containing `marker`."""
    source = next(s for s in _code_cells() if marker in s)
    return re.findall(r'"(\w+)"', said(source, r"only=\[([^\]]*)\]"))


def _failing(fn, ids: list[str]) -> list[str]:
    failed = []
    for check_id in ids:
        try:
            CHECKS[check_id].run(fn)
        except Fail:
            failed.append(check_id)
    return failed


def test_the_chapter_writes_six_versions():
    assert len(versions()) == 6


def test_q1_head_only_loses_the_total_and_only_keeps_tail_fails():
    text, asked, first = answer(CHAPTER, 1), question(CHAPTER, 1), versions()[0]
    full = report()
    assert text.startswith("没有") and full.index("总计：9692") == number(text, r"从第 (\d+) 个字符开始")
    max_chars, keep_head = number(asked, r"max_chars=(\d+)"), number(asked, r"keep_head=(\d+)")
    out = first(full, max_chars, keep_head)
    assert "总计：9692" not in out and out.startswith("季度销售报告")
    ids = _only_after("check(smart_truncate, \"ch02\", only=[\"short_text_unchanged\", \"keeps_head\", \"keeps_tail\"])")
    assert _failing(first, ids) == [said(text, r"^没有，`(\w+)`[^，]*是 ✘")]
    assert len(ids) - 1 == number(text, r"另外(.)行 ✔")


def test_q2_the_old_count_after_moving_the_cuts_is_too_small():
    text, third = answer(CHAPTER, 2), versions()[2]
    assert said(text, r"^(.)。") == "少"
    full = report()
    max_chars = number(text, r"预算 (\d+) 时")
    [(keep_head, keep_tail)] = [(h, t) for m, h, t in SIZES if m == max_chars]  # what the check table ran
    head, claimed, tail = MARKER.split(third(full, max_chars, keep_head, keep_tail))
    really = len(full) - len(head) - len(tail)
    assert int(claimed) == number(text, r"标记写 (\d+)") and really == number(text, r"实际省略了 (\d+) 字符")
    assert really - int(claimed) == number(text, r"退回来的 (\d+) 个字符")
    for size in SIZES:  # "少" at every budget: the cuts only move inwards
        head, claimed, tail = MARKER.split(third(full, *size))
        assert int(claimed) <= len(full) - len(head) - len(tail)


def test_q3_impossible_sizes_give_a_negative_count_and_a_longer_output():
    text = answer(CHAPTER, 3)
    fourth, fifth = versions()[3], versions()[4]
    namespace: dict = {}
    cell = next(s for s in _code_cells() if "8500 字符的明细" in s)
    exec(compile(cell.split("\nout = ")[0], str(CHAPTER), "exec"), namespace)
    lines = namespace["lines"]
    sizes = dict(max_chars=8000, keep_head=4000, keep_tail=5000)
    out = fourth(lines, **sizes)
    assert int(MARKER.search(out).group(1)) == number(text, r"省略数是 \*\*(-?\d+)\*\*") < 0
    assert len(out) == number(text, r"结果有 (\d+) 字符") > len(lines) == number(text, r"比 (\d+) 字符的原文还长")
    assert out.count("第 300 行") == number(text, r"「第 300 行」出现了(.)次")
    with pytest.raises(ValueError, match="把 keep_head 或 keep_tail 调小"):
        fifth(lines, **sizes)


def _read_through(truncate, text: str):
    async def run():
        with use_clock(SimulatedClock(seed=0)):
            return await ToolExecutor(truncate=truncate, result_max_chars=300).execute(lambda: text, "read_report")
    return asyncio.run(run())


def test_q4_the_fifth_version_with_two_arguments_is_a_plugin_error_the_model_reads():
    text, asked = answer(CHAPTER, 4), question(CHAPTER, 4)
    full, fifth, final = report(), versions()[4], versions()[5]
    assert number(asked, r"result_max_chars=(\d+)") == 300
    result = _read_through(fifth, full)
    assert text.startswith("不会停下")
    assert result.status == said(text, r"`status` 是 `(\w+)`")
    assert result.error_code == said(text, r"`error_code` 是 `(\w+)`")
    assert said(text, r"我们写的那句“([^”…]+)……”") in result.error
    assert said(text, r"^不会停下。(\d+ \+ \d+) 超过了") in result.error and result.data is None
    fixed = _read_through(final, full)
    assert fixed.status == "success" and "总计：9692" in fixed.data and len(fixed.data) <= 300


WRONG_ANSWERS = [
    (1, "`keeps_tail`（结尾的「总计：9692」被保留）是 ✘", "`keeps_head`（结尾的「总计：9692」被保留）是 ✘"),
    (1, "另外两行 ✔", "另外三行 ✔"),
    (2, "少。", "多。"),
    (2, "标记写 5360", "标记写 9999"),
    (2, "实际省略了 5375 字符", "实际省略了 1 字符"),
    (3, "省略数是 **-480**", "省略数是 **480**"),
    (3, "出现了两次", "出现了一次"),
    (4, "`error_code` 是 `PLUGIN_ERROR`", "`error_code` 是 `TOOL_ERROR`"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
