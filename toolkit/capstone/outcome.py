"""What one capstone run shows the student (Outcome) and how two runs differ, as Chinese sentences about behaviour:
the results the executor handed on, the tool messages the model read, the answer, the check's verdict. A sentence is
written only where the runs really differ, and an excerpt starts where the two texts part, so two excerpts never
read the same."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "UNFINISHED", "ends", "from_part", "object_of"]

UNFINISHED = "没有跑完"  # the verdict of a run the student's loop or executor ended by raising


# --- what a run shows, and how two runs differ -------------------------------------------------------------------

def _flat(text: str) -> str:
    """`text` as one line whose escapes show what is there (a line break as \\n): two different texts never
    read the same."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _parted(mine: str, theirs: str, width: int = 30) -> tuple[str, str, int]:
    """Excerpts of two different texts from just before the first place they part, and that place: the two
    excerpts always differ (they start at the same offset and part inside, or one of them ends there)."""
    at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
    start = max(at - 8, 0)

    def excerpt(text: str) -> str:
        piece = _flat(text[start:start + width]) or "（到这里就结束了）"
        return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
    return excerpt(mine), excerpt(theirs), at


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _kind(value: Any) -> str:
    if value is None:
        return "空的（null）"
    if isinstance(value, str):
        try:
            json.loads(value)
            return "一段 JSON 文字（字符串里套着 JSON，模型要自己拆）" if value.lstrip()[:1] in "[{" else "一段文字"
        except ValueError:
            return "一段文字"
    return {dict: "一个 JSON 对象", list: "一个列表"}.get(type(value), "一个数值")


def object_of(message: str) -> dict | None:
    """A tool message's content as a JSON object ([TASK_CONTEXT] block left out), or None."""
    from ..task_context import split_task_context

    try:
        value = json.loads(split_task_context(message)[1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_ALWAYS = ("status", "result", "error", "decision")  # fields compared even when null: the model reads them


def _read_fields(value: dict) -> dict:
    """A tool message's fields as the model reads them: a null field says nothing, so it counts as absent."""
    return {k: v for k, v in value.items() if v is not None or k in _ALWAYS}


def _field_differences(mine: dict, theirs: dict) -> list[str]:
    """What the model read differently in one tool message, field by field, in Chinese."""
    mine, theirs, found = _read_fields(mine), _read_fields(theirs), []
    missing = [k for k in theirs if k not in mine]
    if missing:
        found.append(f"模型读到的 tool 消息里没有 {'、'.join(missing)}（toolkit 的有）")
    extra = [k for k in mine if k not in theirs]
    if extra:
        found.append(f"多了 {'、'.join(extra)}（toolkit 的没有）")
    order = {k: i for i, k in enumerate(_ALWAYS)}
    for key in sorted((k for k in mine if k in theirs and mine[k] != theirs[k]), key=lambda k: order.get(k, 9)):
        a, b = mine[key], theirs[key]
        decisions = key == "decision" and isinstance(a, dict) and isinstance(b, dict)
        if decisions and a.get("action") != b.get("action"):
            found.append(f"模型读到的决定是 {a.get('action')}（toolkit：{b.get('action')}）")
        elif decisions and a.get("suggestion") != b.get("suggestion"):
            yours, toolkit, _ = _parted(_text(a.get("suggestion")), _text(b.get("suggestion")))
            found.append(f"决定里的建议不同：你的「{yours}」，toolkit 的「{toolkit}」")
        elif key == "result" and _kind(a) != _kind(b):
            shown = "" if b is None else f"：「{_parted('', _text(b))[1]}」"
            found.append(f"result 是{_kind(a)}（toolkit 的是{_kind(b)}{shown}）")
        elif key in ("status", "error_type", "error_code"):
            found.append(f"模型读到的 {key} 是 {a}（toolkit：{b}）")
        elif a is None or b is None:
            found.append(f"模型读到的 {key} 是 null（toolkit 的是「{_parted('', _text(b))[1]}」）" if a is None else
                         f"模型读到的 {key} 是「{_parted(_text(a), '')[0]}」（toolkit 的是 null）")
        else:
            yours, toolkit, at = _parted(_text(a), _text(b))
            sizes = (f"（你的 {len(_text(a))} 字符，toolkit 的 {len(_text(b))} 字符）"
                     if len(_text(a)) != len(_text(b)) else "")
            found.append(f"{key} 从第 {at + 1} 个字符起不同：你的「{yours}」，toolkit 的「{toolkit}」{sizes}")
    return found


def _message_differences(mine: tuple[str, ...], theirs: tuple[str, ...]) -> list[str]:
    """How the tool messages the model read differ (the first message that does), in Chinese; [] when the same
    (JSON compared as values: key order and spacing are not a difference the model reads)."""
    if len(mine) != len(theirs):
        return [f"模型读到 {len(mine)} 条 tool 消息（toolkit：{len(theirs)} 条）"]
    for n, (a, b) in enumerate(zip(mine, theirs), 1):
        yours, toolkit = object_of(a), object_of(b)
        if (yours == toolkit and yours is not None) or a == b:
            continue
        which = f"第 {n} 条 tool 消息：" if len(mine) > 1 else ""
        if yours is not None and toolkit is not None:
            return [which + sentence for sentence in _field_differences(yours, toolkit)]
        if yours is None and toolkit is not None:
            return [f"{which}模型读到的 tool 消息不是 JSON 对象（toolkit 的是）：「{_parted(a, b)[0]}」"]
        if toolkit is None and yours is not None:
            return [f"{which}模型读到的 tool 消息是 JSON 对象（toolkit 的不是）"]
        x, y, at = _parted(a, b)
        return [f"{which}tool 消息从第 {at + 1} 个字符起不同：你的「{x}」，toolkit 的「{y}」"]
    return []


@dataclass(frozen=True)
class Outcome:
    """What one run shows the student: each tool result the executor handed on, the tool messages as the model
    read them, the answer, the check's verdict (and why it failed), and any piece that failed."""

    statuses: tuple[str, ...]
    messages: tuple[str, ...]
    answer: str
    verdict: str
    problems: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.verdict == "通过"

    def differs_from(self, other: "Outcome") -> list[str]:
        """What differs from `other` (the toolkit's run), one Chinese sentence each, most telling first; [] when
        the student would see no difference."""
        found = list(self.errors)
        if self.unfinished:  # what it did not get to is not a difference of its own
            return found
        if self.statuses != other.statuses:
            found.append(f"执行器交给模型的结果是 {' / '.join(self.statuses) or '（没有调用工具）'}"
                         f"（toolkit：{' / '.join(other.statuses) or '（没有调用工具）'}）")
        if not self.errors:
            found += _message_differences(self.messages, other.messages)
        if self.answer != other.answer:
            yours, toolkit, _ = _parted(self.answer, other.answer)
            found.append(f"模型的回答不同：你的「{yours}」，toolkit 的「{toolkit}」" if self.answer else
                         f"没有得到回答（toolkit 的回答：「{toolkit}」）")
        if self.verdict != other.verdict:
            why = f"：{self.problems[0]}" if self.problems and not self.passed else ""
            found.append(f"验收{self.verdict}（toolkit：{other.verdict}）{why}")
        return found

    @property
    def unfinished(self) -> bool:
        """The student's loop or executor raised: the run ended there."""
        return self.verdict == UNFINISHED

    def headline(self, toolkit: "Outcome") -> str:
        """The one thing that went worse than `toolkit`, in Chinese (for a run whose severity is 2 or 3)."""
        if toolkit.passed and not self.passed and not self.unfinished:
            return f"没通过验收（{self.problems[0] if self.problems else self.verdict}）"
        if self.errors:
            return self.errors[0]
        return (f"执行器交给模型的是 {' / '.join(self.statuses) or '（没有调用工具）'}"
                f"（toolkit：{' / '.join(toolkit.statuses) or '（没有调用工具）'}）")

    def severity(self, toolkit: "Outcome") -> int:
        """How much worse than `toolkit` this run went: 3 its answer failed the check the toolkit's passed,
        2 a piece failed or the executor handed on another result, 1 another answer, 0 at most other fields."""
        if toolkit.passed and not self.passed:
            return 3
        if self.errors or self.statuses != toolkit.statuses:
            return 2
        return 1 if self.answer != toolkit.answer else 0


def from_part(text: str, other: str, width: int) -> str:
    """`text` from a little before where it parts from `other` (both sides shown so never read the same)."""
    at = next((i for i, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    start = max(at - width // 4, 0)
    return f"（从第 {at + 1} 个字符起不同）" + ("…" if start else "") + ends(text[start:], width)


def ends(text: str, width: int) -> str:
    """`text` on one line, its head and tail kept when it is longer than `width`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else f"{flat[:width // 2]} …… {flat[-(width // 2):]}"
