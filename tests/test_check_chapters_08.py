"""Chapter 08's 轮到你 cells, judged by chapter 03's and chapter 02's checks (chapter 08 has no checks of its own):
filled as the chapter's 参考写法 says they pass the checks the cell runs; filled as students get them wrong they fail
the ones named here; left as shipped, every check they run that needs the student's lines says 还没有实现."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolkit.check import run_checks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "08_pitfalls.ipynb"
RETRY_CHECKS = ["transient_errors_retried", "permission_error_not_retried", "max_retries_counts_retries"]
TRUNCATE_CHECKS = ["short_text_unchanged", "keeps_head", "keeps_tail", "exact_count"]


def your_turn(n: int, lines: str):
    """The chapter's 轮到你 n with its placeholder replaced by `lines` (indent 0), run after the import cell; the
    function it defines."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    imports = "".join(cells[1]["source"])
    turns = ["".join(c["source"]) for c in cells if "your-turn" in c["metadata"].get("tags", [])]
    source = turns[n - 1].split("\n\n\ncheck(")[0]
    placeholder = re.search(r'^( *)# 轮到你：.*\n\1raise NotImplementedError\("轮到你"\)$', source, re.M)
    filled = "".join(placeholder.group(1) + line if line.strip() else line for line in lines.splitlines(True))
    source = source[:placeholder.start()] + filled.rstrip("\n") + source[placeholder.end():]
    namespace: dict = {"__name__": "chapter08"}
    exec(compile(imports + "\n" + source, str(NOTEBOOK), "exec"), namespace)
    return namespace[re.search(r"^(?:async )?def (\w+)\(", source, re.M).group(1)]


def _failed(fn, chapter: str, only: list[str]) -> list[str]:
    report = run_checks(fn, chapter, only=only, time_limit=20)
    assert not [r for r in report.results if r.kind == "error"], report.render()
    return [r.id for r in report.results if not r.passed]


RETRY_REFERENCE = ('if not classify_error(exc).retryable or attempt == max_retries:\n'
                   '    return None, f"{exc}（共尝试 {attempt + 1} 次）"\n')
TRUNCATE_REFERENCE = ('omitted = len(text) - keep_head - keep_tail\n'
                      'return text[:keep_head] + f"\\n…（已省略 {omitted} 字符）…\\n" + text[-keep_tail:]\n')


@pytest.mark.parametrize("lines, fails", [
    (RETRY_REFERENCE, []),
    # retries everything, as the original course did: permission and argument errors are tried again
    ('if attempt == max_retries:\n    return None, f"{exc}（共尝试 {attempt + 1} 次）"\n',
     ["permission_error_not_retried"]),
    # forgets the last attempt: the loop runs out and returns None, not (None, error)
    ('if not classify_error(exc).retryable:\n    return None, f"{exc}（共尝试 {attempt + 1} 次）"\n',
     ["max_retries_counts_retries"]),
    # does not say how many attempts were made
    ("if not classify_error(exc).retryable or attempt == max_retries:\n    return None, str(exc)\n",
     ["max_retries_counts_retries"]),
], ids=["reference", "retries_everything", "no_last_attempt", "no_count"])
def test_the_retry_your_turn_passes_filled_right_and_fails_the_named_checks_filled_wrong(lines, fails):
    assert _failed(your_turn(1, lines), "ch03", RETRY_CHECKS) == fails


@pytest.mark.parametrize("lines, fails", [
    (TRUNCATE_REFERENCE, []),
    ('return text[:max_chars] + f"\\n…（已省略 {len(text) - max_chars} 字符）…\\n"\n', ["keeps_tail"]),
    ('omitted = len(text) - max_chars\n'
     'return text[:keep_head] + f"\\n…（已省略 {omitted} 字符）…\\n" + text[-keep_tail:]\n', ["exact_count"]),
    ('return text[:keep_head] + "\\n…\\n" + text[-keep_tail:]\n', ["keeps_head", "keeps_tail", "exact_count"]),
], ids=["reference", "head_only", "count_from_max_chars", "no_marker"])
def test_the_truncation_your_turn_passes_filled_right_and_fails_the_named_checks_filled_wrong(lines, fails):
    assert _failed(your_turn(2, lines), "ch02", TRUNCATE_CHECKS) == fails


@pytest.mark.parametrize("n, chapter, only", [(1, "ch03", RETRY_CHECKS), (2, "ch02", TRUNCATE_CHECKS)])
def test_a_your_turn_cell_as_shipped_says_not_yet_implemented(n, chapter, only):
    report = run_checks(your_turn(n, 'raise NotImplementedError("轮到你")\n'), chapter, only=only, time_limit=20)
    todo = {r.id for r in report.results if r.reason == "还没有实现"}
    assert todo == set(only) - {"short_text_unchanged"}  # a short text is returned before the student's lines
