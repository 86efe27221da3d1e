"""What a chapter's 想一想 questions ask and what their <details> answers claim, read from the notebook.

The answers tests take the numbers, counts and names a chapter's answer states from here and compare them with
what the code gives, so rewriting an answer in the notebook to a wrong claim fails its test. `changed_answer`
makes such a wrong copy of a notebook, for the tests that show it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

QUESTION = re.compile(r"\*\*想一想 (\d+)：\*\*(.*?)<details><summary>答案</summary>(.*?)</details>", re.S)
DIGITS = {"零": 0, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def _questions(path: Path) -> dict[int, tuple[str, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return {int(n): (q.strip(), a.strip()) for n, q, a in QUESTION.findall(text)}


def question(path: Path, n: int) -> str:
    """The text of 想一想 n (up to its answer)."""
    return _questions(path)[n][0]


def answer(path: Path, n: int) -> str:
    """The text of 想一想 n's answer, inside <details>."""
    return _questions(path)[n][1]


def said(text: str, pattern: str, group: int = 1) -> str:
    """What `pattern` captures in `text`; AssertionError naming the pattern when the text no longer says it."""
    found = re.search(pattern, text, re.S)
    assert found, f"the answer no longer says /{pattern}/: {text[:200]!r}"
    return found.group(group)


def number(text: str, pattern: str, group: int = 1) -> int:
    """The integer `pattern` captures (digits with commas, a sign, or a Chinese numeral up to 十)."""
    value = said(text, pattern, group).replace(",", "").strip("*")
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    assert value in DIGITS, f"not a number: {value!r}"
    return DIGITS[value]


def changed_answer(path: Path, n: int, old: str, new: str, folder: Path) -> Path:
    """A copy of the notebook at `path` in `folder` whose answer to 想一想 n says `new` where it said `old`."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    done = 0
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "markdown" or not re.search(rf"\*\*想一想 {n}：\*\*", source):
            continue
        head, rest = source.split("<details>", 1)
        assert rest.count(old) == 1, f"想一想 {n}'s answer says {old!r} {rest.count(old)} times"
        cell["source"] = (head + "<details>" + rest.replace(old, new)).splitlines(True)
        done += 1
    assert done == 1, f"想一想 {n} found {done} times"
    copy = folder / path.name
    copy.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return copy


def assert_a_wrong_answer_fails(module, n: int, old: str, new: str, folder: Path, monkeypatch) -> None:
    """With the answer to 想一想 n rewritten from `old` to `new`, some test_qN_ of `module` fails: the tests
    read the answer, not a copy of its numbers. (module.CHAPTER is the notebook the tests read.)"""
    monkeypatch.setattr(module, "CHAPTER", changed_answer(module.CHAPTER, n, old, new, folder))
    tests = [f for name, f in vars(module).items() if name.startswith(f"test_q{n}_") and callable(f)]
    assert tests, f"no test_q{n}_ in {module.__name__}"
    failed = []
    for test in tests:
        try:
            test()
        except AssertionError:
            failed.append(test.__name__)
    if not failed:
        pytest.fail(f"想一想 {n}'s answer rewritten {old!r} → {new!r}, and every test_q{n}_ still passes")
