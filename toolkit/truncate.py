"""Cutting long text for the model: smart_truncate keeps the head and the tail, at line boundaries.

The head ends at a paragraph, line or sentence end, the tail starts after a line
break, and a marker in between states exactly how many characters were left
out. A cut never splits something shaped like a secret (a key cut in two no
longer looks like a key to `redact`): it moves to the secret's edge.
`truncate_parts` gives the same cut as its parts, for code that draws or checks it.
"""
from __future__ import annotations

import dataclasses
import re

from .redaction import redact

__all__ = ["smart_truncate", "truncate_parts", "Truncation", "omission_marker", "default_keeps"]

_SENTENCE_END = re.compile(r"[。！？!?；;]|\.\s")


def _check_budget_args(max_chars: int, keep_head: int, keep_tail: int) -> None:
    """ValueError for sizes no cut can honour; the message (Chinese: students call this) says how to fix the call."""
    for name, value in (("max_chars", max_chars), ("keep_head", keep_head), ("keep_tail", keep_tail)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} 应该是整数（字符数），收到的是 {value!r}：请传 int，例如 {name}=1000")
        if value < 0:
            raise ValueError(f"{name} 不能是负数，收到的是 {value}：请传 0 或正整数（0 表示这一段一个字符也不留）")
    if keep_head + keep_tail > max_chars:
        raise ValueError(
            f"keep_head + keep_tail（{keep_head} + {keep_tail} = {keep_head + keep_tail}）超过了 max_chars（{max_chars}），"
            f"开头和结尾会重叠：把 keep_head 或 keep_tail 调小，让两者之和不超过 {max_chars}；"
            f"或者把 max_chars 调到至少 {keep_head + keep_tail}")


def _head_end(text: str, keep_head: int) -> int:
    """Where the head stops: a paragraph, line or sentence end in the last half of keep_head."""
    floor = keep_head // 2
    for sep in ("\n\n", "\n"):
        pos = text.rfind(sep, floor, keep_head)
        if pos != -1 and pos >= floor:
            return pos
    last = None
    for match in _SENTENCE_END.finditer(text, floor, keep_head):
        last = match
    return last.start() + 1 if last else keep_head


def _tail_start(text: str, keep_tail: int) -> int:
    """Where the tail starts: just after a line break in the first half of the tail."""
    start = len(text) - keep_tail
    if keep_tail == 0:
        return len(text)
    pos = text.find("\n", start, start + keep_tail // 2)
    return pos + 1 if pos != -1 else start


_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-.=+/~]")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.=+/~]*")
_RUN_REACH = 4096  # how far a cut looks for the ends of the token it falls in


def _secret_around(text: str, i: int) -> tuple[int, int] | None:
    """(start, end) of the token a cut at `i` would split, when that token looks like a secret.

    A key cut in two loses its "sk-" prefix (or its "api_key=" label) in one
    piece, and that piece no longer looks like a key to `redact`. So a cut
    never splits a secret: the head stops before it, the tail starts after
    it, and the secret is counted among the omitted characters. Ordinary words
    and long runs (a hex dump, "xxxx…") are cut where asked. Bounded work.
    """
    if not (0 < i < len(text) and _TOKEN_CHAR.match(text, i - 1) and _TOKEN_CHAR.match(text, i)):
        return None
    start, floor = i, max(i - _RUN_REACH, 0)
    while start > floor and _TOKEN_CHAR.match(text, start - 1):
        start -= 1
    end = _TOKEN_RUN.match(text, i, min(len(text), i + _RUN_REACH)).end()
    segment = text[max(start - 40, 0): end + 40]  # the label before and the "@host" after count too
    return (start, end) if redact(segment) != segment else None


def _whole_secret_head(text: str, end: int) -> int:
    run = _secret_around(text, end)
    return run[0] if run else end


def _whole_secret_tail(text: str, start: int) -> int:
    run = _secret_around(text, start)
    return run[1] if run else start


@dataclasses.dataclass(frozen=True)
class Truncation:
    """smart_truncate's answer in its parts: `head` + `marker` + `tail` is the text it returns.

    head: the prefix kept; omitted: how many characters of the text were left out;
    tail: the suffix kept; marker: the line stating `omitted` ("" when nothing was
    left out: then head is the whole text and tail is "").
    """

    head: str
    omitted: int
    tail: str
    marker: str

    @property
    def text(self) -> str:
        """The truncated text, as smart_truncate returns it."""
        return f"{self.head}{self.marker}{self.tail}"

    @property
    def truncated(self) -> bool:
        return self.omitted > 0


def omission_marker(omitted: int) -> str:
    """The line smart_truncate puts where `omitted` characters were left out."""
    return f"\n\n…（已省略 {omitted} 字符）…\n\n"


MARKER_ROOM = 40  # what a budget keeps for the marker when it is split: the marker is 15 characters + the count
ORIGINAL_HEAD, ORIGINAL_TAIL = 4000, 2000  # the original course's keep_head and keep_tail


def default_keeps(max_chars: int, keep_head: int | None = None, keep_tail: int | None = None) -> tuple[int, int]:
    """(keep_head, keep_tail) for a call that left one or both out: the original course's 4000 and 2000, or
    less when `max_chars` is smaller: MARKER_ROOM characters kept for the marker, two thirds of the rest for the
    head and one third for the tail (the executor's own split). So smart_truncate(text, max_chars) is never
    longer than max_chars (marker included) for any max_chars >= MARKER_ROOM: the truncate plug-in's contract."""
    room = max(max_chars - MARKER_ROOM, 0) if isinstance(max_chars, int) else 0
    if keep_head is None:
        keep_head = min(ORIGINAL_HEAD, room * 2 // 3)
    if keep_tail is None:
        keep_tail = min(ORIGINAL_TAIL, max(room - keep_head, 0) if isinstance(keep_head, int) else 0)
    return keep_head, keep_tail


def truncate_parts(text: str, max_chars: int = 8000, keep_head: int | None = None,
                   keep_tail: int | None = None) -> Truncation:
    """Where smart_truncate cuts `text`, as a Truncation (same arguments, same errors, same rules)."""
    keep_head, keep_tail = default_keeps(max_chars, keep_head, keep_tail)
    _check_budget_args(max_chars, keep_head, keep_tail)
    if not isinstance(text, str):
        raise TypeError(f"smart_truncate 只截断字符串 str，收到的是 {type(text).__name__}："
                        "其他类型的值先用 parse_tool_result 变成文本，JSON 数据用 shrink_json")
    if len(text) <= max_chars:
        return Truncation(text, 0, "", "")
    head_end = _whole_secret_head(text, _head_end(text, keep_head))
    tail_start = max(_whole_secret_tail(text, _tail_start(text, keep_tail)), head_end)
    omitted = tail_start - head_end
    return Truncation(text[:head_end], omitted, text[tail_start:], omission_marker(omitted))


def smart_truncate(text: str, max_chars: int = 8000, keep_head: int | None = None,
                   keep_tail: int | None = None) -> str:
    """Keep the head and the tail of a long text, cut at line boundaries.

    Text of at most `max_chars` comes back unchanged. Longer text becomes
    head + marker + tail: the head is a prefix of the text ending at a
    paragraph, line or sentence boundary (at most `keep_head` characters), the
    tail a suffix starting after a line break (at most `keep_tail`), and the
    marker states exactly how many characters were left out. The result is
    never longer than keep_head + keep_tail + the marker. `truncate_parts`
    gives the same cut as its parts (head, omitted count, tail, marker).

    keep_head / keep_tail left out: the original course's 4000 and 2000, or less
    when max_chars is smaller (`default_keeps`: 40 characters for the marker, the
    rest split 2 : 1), so `smart_truncate(text, max_chars)` fits max_chars, marker
    included, and can be the executor's truncate plug-in at any budget of 40 or more.

    Raises ValueError for sizes that are not ints, negative sizes or keep_head + keep_tail > max_chars,
    TypeError when `text` is not a str; their messages (Chinese) say how to fix the call.
    """
    return truncate_parts(text, max_chars, keep_head, keep_tail).text
