"""Checking the model's final answer against the tool result: check_answer (回答验收, chapter 07).

A tool that computed the right numbers is not enough: the answer built from
them must say the same thing. The rules, kept simple on purpose so a student
can predict them:

1. Every number in the answer must come from the tool result: from its
   numbers, or from digits inside its strings and keys ("07:30", "第 4 行"),
   anywhere in the JSON. "9,692" and full-width "９６９２" count as 9692; a
   number with decimals may be the tool's number rounded ("46.4" for 46.38);
   "-3" needs -3, but a plain "3" also matches -3 ("零下 3 度"). Numbers
   written in Chinese characters (九千) are not checked by this rule. A
   percentage counts like any number: "46.4%" passes only when the tool
   gave 46.4 (or 46.38), not when it is a share the answer computed; sums
   and differences the answer computed are flagged the same way. A space
   is not a thousands separator ("9 692" reads as 9 and 692). Line-start
   list markers ("1. ", "2、") are not numbers. Numbers in `question` are
   allowed (the answer may repeat them).
2. When the tool succeeded, the fields the tool requires must be mentioned
   (a number as a whole number of the answer, Arabic or Chinese with units:
   9692 is not in "96920", 九千六百九十二 counts) and the tool's own answer
   rules must hold. Both come with the tool (toolkit.knowledge:
   ToolKnowledge.required / answer_rules); the sales tool requires the top
   category and the total, and its rules read what each clause claims
   (toolkit.claims): a total in any wording ("三个类别共计 4495", "总销售
   4495", "一共 2985", "总销售额不是 9692", "超过 / 不到 / 约 / 到"), the
   top or bottom category with negation ("最高的是键盘而非显示器"), and one
   category against another ("键盘比显示器高"). A count ("合计 5 行数据")
   and a percentage are not totals.
3. When the tool failed, the answer must say so (失败、无法、错误 ...) and must
   not contain numbers the error did not give. Whether it failed is read from
   the structured status (ToolResult.status, the tool message's "status", a
   tool envelope's error), never from the wording of a text.

It checks where numbers come from, not how they are paired: "显示器 2985，
键盘 4495" passes rule 1. For that, compare structured results.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from .claims import written_numbers
from .guard import PluginError, run_plugin
from .knowledge import ToolKnowledge, knowledge_for, knowledge_for_data
from .numbers import numbers_in_text, numbers_in_value
from .numbers import supported as _supported
from .readback import read_tool_content
from .redaction import safe_str
from .results import ToolResult

__all__ = ["AnswerCheck", "check_answer", "FAILURE_WORDS"]

FAILURE_WORDS = ("失败", "无法", "错误", "出错", "不能", "未能", "没能", "找不到", "未找到", "没有找到",
                 "不存在", "缺失", "异常", "有误")
_LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:[-*+][ \t]+)?[0-9]{1,2}[.、)）](?![0-9])")


@dataclass
class AnswerCheck:
    """The verdict on one answer: ok, and in Chinese what does not match."""

    ok: bool
    mismatches: list[str]
    numbers_in_answer: list[int | float | Decimal]  # a Decimal for a number int/float cannot hold (over 4,300 digits)
    unsupported_numbers: list[int | float | Decimal] = field(default_factory=list)
    tool_failed: bool = False

    def report(self) -> str:
        """A short Chinese verdict for a notebook cell."""
        if self.ok:
            return f"✔ 回答通过验收（检查了 {len(self.numbers_in_answer)} 个数字）"
        return "✘ 回答未通过验收：\n" + "\n".join(f"- {m}" for m in self.mismatches)


_INT_DIGITS = 4300  # Python refuses str() of longer ints (sys.get_int_max_str_digits): such a number stays a Decimal
_SHOWN_DIGITS = 40  # a longer number is shown by its first digits and how many it has


def _plain(value: Decimal) -> int | float | Decimal:
    """The number as Python's own int or float; a Decimal when neither can hold it as text can (over 4,300
    digits, or a float that would be infinite): an int that repr() refuses must not reach a notebook."""
    if value == value.to_integral_value():
        return int(value) if value.adjusted() < _INT_DIGITS else value
    number = float(value)
    return number if math.isfinite(number) else value


def _show(value: Decimal) -> str:
    """The number as the answer wrote it, for a mismatch: whole up to 40 digits, else its head and length."""
    if value.adjusted() < _SHOWN_DIGITS:
        return str(_plain(value))
    text = format(value, "f")
    digits = sum(c.isdigit() for c in text)
    return f"{text[:20]}…（共 {digits} 位数字）"


@dataclass
class _Outcome:
    failed: bool
    payload: Any  # everything numbers may come from
    data: Any  # where required fields are looked up
    error_code: str | None = None
    knowledge: ToolKnowledge = field(default_factory=ToolKnowledge)


def _outcome(result: Any) -> _Outcome:
    """One tool result, read once: a ToolResult, a tool message's text, a tool's return value."""
    if result is None:
        raise ValueError("check_answer 的工具结果不能是 None：请在回答后面传工具的返回值、它的 tool 消息文字或 "
                         "ToolResult（模型没有调用工具时一个也不传）")
    if isinstance(result, ToolResult):  # the executor opened the envelope once: read its fields, not the data again
        data = result.artifact if result.artifact is not None else result.data
        failed = result.status == "error"
        known = knowledge_for(result.name)
        known = known if known.required or known.answer_rules else knowledge_for_data(data)
        return _Outcome(failed, [data, result.error], None if failed else data, result.error_code, known)
    reading = read_tool_content(result)  # a plain string that is not a tool message is data, never a verdict
    payload = [reading.data, reading.error] if reading.failed else reading.data
    return _Outcome(reading.failed, payload, None if reading.failed else reading.data, reading.error_code,
                    knowledge_for_data(reading.data))


def _as_number(value: Any) -> Decimal | None:
    """A required value as a number: an int or float, or a str that is exactly one number ("4495")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        return number if number.is_finite() else None
    if isinstance(value, str):
        written = written_numbers(value)
        if len(written) == 1 and written[0].text.strip() == value.strip():
            return written[0].value
    return None


def _mentions(answer: str, numbers: set[Decimal], value: Any) -> bool:
    """Whether the answer names `value`: a number as a whole number of the answer (4495 is not in "44950"
    or "49%"), a name as text."""
    number = _as_number(value)
    if number is not None:
        return _supported(number, numbers)
    if isinstance(value, str):
        return value in answer
    return True  # other types cannot be checked in prose


def _required(answer: str, numbers: set[Decimal], data: Any, required: Mapping[str, str]) -> list[str]:
    if not isinstance(data, dict):
        return []
    return [f"回答没有提到{label}「{data[key]}」" for key, label in required.items()
            if key in data and not _mentions(answer, numbers, data[key])]


def _rules(answer: str, data: Any, knowledge: ToolKnowledge) -> list[str]:
    """The tool's own answer rules; a rule that raises is reported, never raised."""
    if not isinstance(data, dict):
        return []
    problems: list[str] = []
    for rule in knowledge.answer_rules:
        name = safe_str(getattr(rule, "__name__", type(rule).__name__), 80)
        try:  # a tool's answer rule is its author's code (a plug-in): its failure is one more mismatch
            problems += run_plugin(name, lambda rule=rule: [safe_str(p, 300) for p in rule(answer, data) or ()])
        except PluginError as failed:
            problems.append(f"答案规则 {name} 出错：{failed.detail}")
    return problems


def check_answer(answer: str, *tool_results: Any, question: str | None = None,
                 required: Mapping[str, str] | None = None) -> AnswerCheck:
    """Check a final answer against the tool result(s) it was built from (rules in the module doc).

    tool_results (several for multi-step tasks; none when the model answered
    without calling a tool: then no number of the answer has a source): a tool's
    return value (its {status, data, source, error} envelope or any JSON-like
    dict/list), a tool message's text, or a ToolResult. required: data field ->
    Chinese label of facts the answer must mention when that tool succeeded
    (default: the tool's own ToolKnowledge.required, found by the ToolResult's
    name or by the shape of the data; fields a result does not have are
    skipped). Numbers of any length are read (one of 5,000 digits too: it is
    reported by its first digits, and kept as a Decimal in numbers_in_answer).
    Raises ValueError when answer is not a str or a tool result is None.
    """
    if not isinstance(answer, str):
        raise ValueError(f"answer 应是模型最后的回答文字（str），收到 {type(answer).__name__}：请传 run.answer 这样的字符串")
    outcomes = [_outcome(r) for r in tool_results]
    allowed = numbers_in_value([o.payload for o in outcomes]) | set(numbers_in_text(question or ""))
    found = numbers_in_text(_LIST_MARKER.sub("", answer))
    unsupported = list(dict.fromkeys(n for n in found if not _supported(n, allowed)))
    failed = [o for o in outcomes if o.failed]
    mismatches: list[str] = []
    if failed and not any(word in answer for word in FAILURE_WORDS):
        codes = "、".join(o.error_code or "错误" for o in failed)
        mismatches.append(f"工具返回了错误（{codes}），回答却没有说明失败")
    for number in unsupported:
        mismatches.append(f"工具失败了，回答中却出现了数字 {_show(number)}（没有依据的数据）"
                          if failed and len(failed) == len(outcomes) else
                          f"回答中的数字 {_show(number)} 不在工具结果中（可能是编造或算错）")
    answer_numbers = set(found) | {w.value for w in written_numbers(answer, chinese=True) if w.chinese}
    for outcome in outcomes:
        if not outcome.failed:
            wanted = outcome.knowledge.required if required is None else required
            mismatches += _required(answer, answer_numbers, outcome.data, wanted)
            mismatches += _rules(answer, outcome.data, outcome.knowledge)
    return AnswerCheck(not mismatches, mismatches, [_plain(n) for n in found],
                       [_plain(n) for n in unsupported], bool(failed))
