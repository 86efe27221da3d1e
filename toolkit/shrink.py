"""Turning any value into JSON within a character budget: shrink_json, and dumps.

JSON stays JSON: over budget, a structure shrinks structurally (fewer list
items and fields, with a note saying how many were left out, shorter
strings); values json cannot serialize (datetime, bytes, Decimal, sets, NaN,
objects) become faithful strings; cycles and deep nesting become notes. The
work is bounded by the budget, not by the input: a million records are never
serialized whole just to be cut.
"""
from __future__ import annotations

import codecs
import dataclasses
import datetime as _dt
import decimal
import enum
import itertools
import json
import math
import uuid
from pathlib import PurePath
from typing import Any, Iterable

from .redaction import redact, safe_str
from .results import PartialResult, ToolResult

__all__ = ["shrink_json", "fit_json", "dumps", "exceeds", "omitted_notes", "clean_text", "bytes_text", "MAX_DEPTH"]

MAX_DEPTH = 20               # deeper nesting is shown as a note


class _OverBudget(Exception):
    pass


# (max items per container, max characters per string); None = no limit
_LEVELS: list[tuple[int | None, int | None]] = [
    (None, None), (50, 2000), (20, 600), (10, 200), (5, 80), (3, 40), (1, 20), (0, 8),
]


def clean_text(text: str) -> str:
    """`text` without lone surrogates, so it can always be encoded as UTF-8 (sent to a model API)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class _Renderer:
    """One pass of budgeted conversion; raises _OverBudget as soon as it cannot fit."""

    def __init__(self, items: int | None, strlen: int | None, budget: int) -> None:
        self.items, self.strlen, self.budget = items, strlen, budget
        self.used = 0
        self.shrunk = False
        self.path: set[int] = set()

    def spend(self, n: int) -> None:
        self.used += n
        if self.used > self.budget:
            raise _OverBudget

    def text(self, value: str) -> str:
        if self.strlen is not None and len(value) > self.strlen:
            self.shrunk = True
            # redact before cutting: a key cut short would no longer look like a key
            kept = redact(value[: self.strlen + 256])[: self.strlen]
            value = f"{kept}…（省略 {len(value) - self.strlen} 字符）"
        value = clean_text(value)
        self.spend(len(value) + 2)
        return value

    def data(self, obj: Any) -> str:
        """Bytes as their UTF-8 text; a head cut to the string limit keeps the size ("…（共 N 字节）") whole."""
        size = len(obj)
        text = bytes_text(bytes(obj[: (self.strlen or size) * 4 + 4]), size)
        suffix = f"…（共 {size} 字节）"
        if not text.endswith(suffix):  # all of it, or a note for binary data
            return self.text(text)
        head = text[: -len(suffix)]
        if self.strlen is not None and len(head) > self.strlen:
            self.shrunk = True
            head = redact(head[: self.strlen + 256])[: self.strlen]  # redact before cutting, as text() does
        value = clean_text(head) + suffix
        self.spend(len(value) + 2)
        return value

    def note(self, value: str) -> str:
        """One of the renderer's own notes ("…还有 N 项未显示"): whole or not at all, never cut like data (a
        note cut short would be a marker inside a marker)."""
        self.spend(len(value) + 2)
        return value

    def render(self, obj: Any, depth: int = 0) -> Any:
        """`obj` as JSON-ready data within the budget."""
        if obj is None or isinstance(obj, bool):
            self.spend(5 if obj is False else 4)  # null, true, false
            return obj
        if isinstance(obj, int):
            bits = obj.bit_length()
            if bits > 3000:  # str() of huge ints is slow and capped by Python
                self.shrunk = True
                return self.text(f"<约 {int(bits * 0.30103) + 1} 位的整数>")
            number = int(obj)  # an IntEnum is written as its number, as json writes it
            self.spend(len(repr(number)))
            return number
        if isinstance(obj, float):
            if math.isnan(obj) or math.isinf(obj):
                return self.text(repr(float(obj)))  # JSON has no NaN/Infinity
            number = float(obj)
            self.spend(len(repr(number)))
            return number
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return self.data(obj)
        simple = _simple_text(obj)
        if simple is not None:
            return self.text(simple)
        if depth >= MAX_DEPTH:
            self.shrunk = True
            return self.text("…（嵌套过深，已省略）")
        if id(obj) in self.path:
            self.shrunk = True
            return self.text("…（循环引用）")
        self.path.add(id(obj))
        try:
            return self.container(obj, depth)
        finally:
            self.path.discard(id(obj))

    def container(self, obj: Any, depth: int) -> Any:
        if isinstance(obj, PartialResult):
            obj = {"data": obj.data, "missing": obj.missing}
        elif isinstance(obj, ToolResult):
            obj = {"status": obj.status, "result": obj.data, "error": obj.error}
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            obj = {f.name: getattr(obj, f.name, None) for f in dataclasses.fields(obj)}
        if isinstance(obj, dict):
            return self.mapping(len(obj), obj.items(), depth)
        if isinstance(obj, (list, tuple)):
            return self.sequence(len(obj), obj, depth)
        if isinstance(obj, (set, frozenset)):
            n = len(obj)
            return self.sequence(n, sorted(obj, key=safe_str) if n <= 1000 else itertools.islice(obj, 1000), depth)
        dump = getattr(obj, "model_dump", None)  # pydantic models, openai SDK objects
        if callable(dump):
            try:
                dumped = dump()
            except Exception:  # a model that cannot serialize one of its fields is shown as its text
                return self.text(safe_str(obj, 10_000))
            return self.render(dumped, depth + 1)
        return self.text(safe_str(obj, 10_000))

    def mapping(self, n: int, items: Iterable[tuple[Any, Any]], depth: int) -> dict:
        keep = n if self.items is None else min(n, self.items)
        out: dict[str, Any] = {}
        shown = 0
        self.spend(2)
        for key, value in itertools.islice(items, keep):
            skey = clean_text(key) if isinstance(key, str) else safe_str(key, 200)
            self.spend(len(skey) + 4)
            out[skey] = self.render(value, depth + 1)
            shown += 1
        if shown < n:
            self.shrunk = True
            out["…"] = self.note(f"还有 {n - shown} 个字段未显示（共 {n} 个）")
        return out

    def sequence(self, total: int, items: Iterable[Any], depth: int) -> list:
        keep = total if self.items is None else min(total, self.items)
        out: list[Any] = []
        self.spend(2)
        for item in itertools.islice(items, keep):
            if out:
                self.spend(2)  # ", " between items
            out.append(self.render(item, depth + 1))
        if len(out) < total:
            self.shrunk = True
            if out:
                self.spend(2)
            out.append(self.note(f"…还有 {total - len(out)} 项未显示（共 {total} 项）"))
        return out


def bytes_text(head: bytes, size: int) -> str:
    """UTF-8 text of `head` (the first bytes of `size`), or a note for binary data."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(head, final=len(head) >= size)
    except UnicodeDecodeError:
        return f"<二进制数据，{size} 字节>"
    return text if len(head) >= size else f"{text}…（共 {size} 字节）"


def _simple_text(obj: Any) -> str | None:
    """Faithful text for common values json cannot serialize; None when not one of them."""
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, _dt.timedelta):
        return f"{obj.total_seconds()}s"
    if isinstance(obj, (decimal.Decimal, uuid.UUID, PurePath, complex)):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return safe_str(obj.value)
    return None


def omitted_notes(obj: Any) -> tuple[str, ...]:
    """What stands for `obj` when nothing of it fits, longest first, each a whole marker: what it was and how
    much of it ("…（共 3000 项，均已省略）", "…（共 2 个字段，均已省略）", "…（共 5000 字符，均已省略）"),
    then "…（已省略）", then "…"."""
    if isinstance(obj, dict):
        whole = f"…（共 {len(obj)} 个字段，均已省略）"
    elif isinstance(obj, str):
        whole = f"…（共 {len(obj)} 字符，均已省略）"
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        whole = f"…（共 {memoryview(obj).nbytes} 字节，均已省略）"
    elif isinstance(obj, (list, tuple, set, frozenset)):
        whole = f"…（共 {len(obj)} 项，均已省略）"
    else:
        whole = f"…（{safe_str(type(obj).__name__, 24)} 值，已省略）"
    return whole, "…（已省略）", "…"


def _omitted(obj: Any, max_chars: int) -> str:
    """The longest of omitted_notes(obj) whose JSON fits max_chars ("…" when none does)."""
    return next((n for n in omitted_notes(obj) if len(dumps(n)) <= max_chars), "…")


def fit_json(obj: Any, max_chars: int) -> tuple[Any, bool]:
    """(shrink_json(obj, max_chars), whether anything was left out). When not even the tightest level fits, a
    whole marker stands for the value (omitted_notes), never a marker cut short."""
    for items, strlen in _LEVELS:
        renderer = _Renderer(items, strlen, max_chars)
        try:
            value = renderer.render(obj)
        except (_OverBudget, RecursionError):
            continue
        # `used` bounds the JSON length up to escaping (at most 6 characters per character),
        # so small values skip the check serialization
        if renderer.used * 6 <= max_chars or len(dumps(value)) <= max_chars:
            return value, renderer.shrunk
    return _omitted(obj, max_chars), True


def exceeds(value: Any, max_chars: int) -> bool:
    """Whether the JSON of `value` (as shrink_json would write it, unshrunk) is longer than `max_chars`.

    A measure, not a rendering: it stops as soon as the budget is passed, so the
    work is bounded by max_chars however large `value` is.
    """
    renderer = _Renderer(None, None, max_chars)
    try:
        renderer.render(value)
    except (_OverBudget, RecursionError):
        return True
    return renderer.shrunk


def shrink_json(obj: Any, max_chars: int = 8000) -> Any:
    """A JSON-serializable version of `obj` whose JSON text is at most `max_chars` characters.

    Values that fit come back unchanged in content. Larger ones shrink
    structurally: fewer list items and dict fields (with a note saying how many
    were left out), shorter strings. Values json cannot serialize (datetime,
    bytes, Decimal, sets, NaN, objects) become faithful strings; cycles and very
    deep nesting become notes. Work is bounded by `max_chars`, not by the size
    of `obj`. Raises ValueError when max_chars < 3 (the shortest note, "…", needs 3).
    """
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 3:
        raise ValueError(f"max_chars 应该是不小于 3 的整数（最短的说明 \"…\" 写成 JSON 也要 3 个字符），"
                         f"收到的是 {max_chars!r}：请把 max_chars 调到 3 或更大")
    return fit_json(obj, max_chars)[0]


def dumps(value: Any) -> str:
    """Compact JSON text, Chinese kept readable (ensure_ascii=False)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
