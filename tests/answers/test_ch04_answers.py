"""The answers chapter 04 gives to its 想一想 questions are true of the chapter's code and of the toolkit.

Each test reads the answer's claims from the notebook's <details> (the status written, same or different
texts, is_error, the keys the SDK types) and compares them with what the code gives; the last test shows a
wrong answer fails."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from notebook_answers import answer, assert_a_wrong_answer_fails, number, question, said

from toolkit import ToolResult, format_tool_message

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "04_tool_messages.ipynb"
HALF = ToolResult("get_weather", {"上海": "多云 28°C"}, "部分结果缺失：北京的天气接口超时", error_type="partial",
                  missing="北京")
FATAL = ToolResult("search", None, "没有访问 /data/finance 的权限", error_type="fatal", error_code="PERMISSION_DENIED")
BODY = {"openai_chat": "content", "openai_responses": "output", "anthropic": "content"}


def chapter_version(marker: str):
    """The format_tool_message the chapter defines in the code cell whose source matches `marker`."""
    cells = ["".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    [source] = [s for s in cells if re.search(marker, s) and "def format_tool_message(" in s]
    namespace = {"__name__": "chapter_04", "json": json}
    exec(compile(source, str(CHAPTER), "exec"), namespace)
    return namespace["format_tool_message"]


def original():
    return chapter_version(r"第一版：原课程的代码")


def classroom():
    return chapter_version(r"课堂版：")


def test_q1_the_original_writes_a_partial_result_as_an_error():
    text = answer(CHAPTER, 1)
    assert HALF.status == said(question(CHAPTER, 1), r"`status` 为 `(\w+)` 的结果") and HALF.error is not None
    assert json.loads(original()("get_weather", "call_3", HALF)["content"])["status"] == said(text, r'^`"(\w+)"`')
    assert said(text, r"第一版用 `([^`]+)` 判断成败") == "result.error is None"
    assert json.loads(classroom()("get_weather", "call_3", HALF)["content"])["status"] == HALF.status


def test_q2_three_formats_carry_the_same_text_and_only_an_error_is_marked_is_error():
    text = answer(CHAPTER, 2)
    same = said(text, r"^三段文本(完全一样|不一样)") == "完全一样"
    is_error = said(text, r"`is_error` 是 `(True|False)`") == "True"
    assert said(text, r"只有 `status` 为 `(\w+)` 时才是 `True`") == "error"
    for fn in (classroom(), format_tool_message):
        texts = {fn("get_weather", "call_6", HALF, fmt=fmt)[key] for fmt, key in BODY.items()}
        assert (len(texts) == 1) == same
        assert fn("get_weather", "call_6", HALF, fmt="anthropic")["is_error"] is is_error
        assert fn("search", "call_6", FATAL, fmt="anthropic")["is_error"] is True


def test_q3_the_sdk_types_only_the_envelope_of_a_tool_message():
    from openai.types.chat import ChatCompletionToolMessageParam

    text = answer(CHAPTER, 3)
    assert "ChatCompletionToolMessageParam" in question(CHAPTER, 3)
    keys = re.findall(r"`(\w+)`", said(text, r"^它规定了 ((?:`\w+`、?)+) (.)个键"))
    assert len(keys) == number(text, r"^它规定了 (?:`\w+`、?)+ (.)个键")
    assert sorted(keys) == sorted(ChatCompletionToolMessageParam.__annotations__)
    content = ChatCompletionToolMessageParam.__annotations__["content"].__forward_arg__
    assert "`content` 是文字（或文字块的列表）" in text and "str" in content and "Iterable[" in content


WRONG_ANSWERS = [
    (1, '`"error"`。', '`"partial"`。'),
    (2, "三段文本完全一样", "三段文本不一样"),
    (2, "`is_error` 是 `False`", "`is_error` 是 `True`"),
    (3, "它规定了 `content`、`role`、`tool_call_id` 三个键", "它规定了 `content`、`role`、`tool_call_id`、`name` 四个键"),
]


@pytest.mark.parametrize("n, old, new", WRONG_ANSWERS, ids=[f"q{n}-{new[:14]}" for n, _, new in WRONG_ANSWERS])
def test_a_wrong_answer_in_the_notebook_fails_its_test(n, old, new, tmp_path, monkeypatch):
    assert_a_wrong_answer_fails(sys.modules[__name__], n, old, new, tmp_path, monkeypatch)
