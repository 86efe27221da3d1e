"""Turning raw tool output into what the model reads: parse_tool_result, smart_truncate, shrink_json.

The five strategies of the original course (pass-through, JSON, head+tail summary,
error conversion, Markdown table) plus preprocessing by tool kind (query /
read / write). Two rules hold everywhere:

* JSON stays JSON. Over budget, structures shrink structurally (fewer list
  items, shorter strings, a note saying how much was left out); text is never
  cut in the middle of a JSON token.
* Work is bounded by the budget, not by the input: a million records are
  never serialized whole just to be cut.
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
import re
import uuid
from pathlib import PurePath
from typing import Any, Literal

from .results import ToolResult, PartialResult, classify_error, error_from_envelope, redact, safe_str

__all__ = [
    "parse_tool_result", "smart_truncate", "shrink_json", "dumps", "estimate_tokens",
    "to_markdown_table", "fit_for_model", "ToolKind",
]

ToolKind = Literal["query", "read", "write"]

CHARS_PER_TOKEN = 4          # the original course's rough rule, for ASCII text
MAX_DEPTH = 20               # deeper nesting is shown as a note
JSON_TEXT_PARSE_LIMIT = 20_000_000  # longer "JSON-looking" text is cut as text
STATS_ROWS = 10_000          # query statistics look at most this many rows


def estimate_tokens(text: str) -> int:
    """Rough token count: 4 ASCII characters or 1 CJK character ≈ 1 token."""
    ascii_count = len(text.encode("ascii", "ignore"))  # = characters below 128, at C speed
    return math.ceil(ascii_count / CHARS_PER_TOKEN + (len(text) - ascii_count))


# --- smart_truncate ------------------------------------------------------------

_SENTENCE_END = re.compile(r"[。！？!?；;]|\.\s")


def _check_budget_args(max_chars: int, keep_head: int, keep_tail: int) -> None:
    for name, value in (("max_chars", max_chars), ("keep_head", keep_head), ("keep_tail", keep_tail)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} must be an int, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if keep_head + keep_tail > max_chars:
        raise ValueError(
            f"keep_head + keep_tail ({keep_head} + {keep_tail}) must not exceed max_chars ({max_chars}); "
            "lower keep_head/keep_tail or raise max_chars")


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


def smart_truncate(text: str, max_chars: int = 8000, keep_head: int = 4000, keep_tail: int = 2000) -> str:
    """Keep the head and the tail of a long text, cut at line boundaries.

    Text of at most `max_chars` comes back unchanged. Longer text becomes
    head + marker + tail: the head is a prefix of the text ending at a
    paragraph, line or sentence boundary (at most `keep_head` characters), the
    tail a suffix starting after a line break (at most `keep_tail`), and the
    marker states exactly how many characters were left out. The result is
    never longer than keep_head + keep_tail + the marker.

    Raises ValueError for negative sizes or keep_head + keep_tail > max_chars,
    TypeError when `text` is not a str.
    """
    _check_budget_args(max_chars, keep_head, keep_tail)
    if not isinstance(text, str):
        raise TypeError(f"smart_truncate expects str, got {type(text).__name__}; use parse_tool_result for other values")
    if len(text) <= max_chars:
        return text
    head_end = _whole_secret_head(text, _head_end(text, keep_head))
    tail_start = max(_whole_secret_tail(text, _tail_start(text, keep_tail)), head_end)
    omitted = tail_start - head_end
    return f"{text[:head_end]}\n\n…（已省略 {omitted} 字符）…\n\n{text[tail_start:]}"


# --- converting anything to JSON, within a budget -------------------------------

class _OverBudget(Exception):
    pass


# (max items per container, max characters per string); None = no limit
_LEVELS: list[tuple[int | None, int | None]] = [
    (None, None), (50, 2000), (20, 600), (10, 200), (5, 80), (3, 40), (1, 20), (0, 8),
]


def _clean(text: str) -> str:
    """Drop lone surrogates so the text can always be encoded as UTF-8."""
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
        value = _clean(value)
        self.spend(len(value) + 2)
        return value

    def render(self, obj: Any, depth: int = 0) -> Any:
        if obj is None or isinstance(obj, bool):
            self.spend(5 if obj is False else 4)  # null, true, false
            return obj
        if isinstance(obj, int):
            if obj.bit_length() > 3000:  # str() of huge ints is slow and capped by Python
                self.shrunk = True
                return self.text(f"<约 {int(obj.bit_length() * 0.30103) + 1} 位的整数>")
            self.spend(len(int.__repr__(obj)))  # what json writes, even for int subclasses
            return int(obj)
        if isinstance(obj, float):
            if math.isnan(obj) or math.isinf(obj):
                return self.text(repr(obj))  # JSON has no NaN/Infinity
            self.spend(len(float.__repr__(obj)))
            return float(obj)
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return self.text(_bytes_text(bytes(obj[: (self.strlen or len(obj)) * 4 + 4]), len(obj)))
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
            return self.mapping(obj, depth)
        if isinstance(obj, (list, tuple)):
            return self.sequence(obj, len(obj), depth)
        if isinstance(obj, (set, frozenset)):
            items = sorted(obj, key=safe_str) if len(obj) <= 1000 else list(itertools.islice(obj, 1000))
            return self.sequence(items, len(obj), depth)
        try:
            dump = getattr(obj, "model_dump", None)  # pydantic models, openai SDK objects
        except Exception:  # an object whose __getattr__ raises is still shown as text
            dump = None
        if callable(dump):
            try:
                return self.render(dump(), depth + 1)
            except _OverBudget:
                raise
            except Exception:
                pass
        return self.text(safe_str(obj, 10_000))

    def mapping(self, obj: dict, depth: int) -> dict:
        n = len(obj)
        keep = n if self.items is None else min(n, self.items)
        out: dict[str, Any] = {}
        self.spend(2)
        for key, value in itertools.islice(obj.items(), keep):
            skey = _clean(key) if isinstance(key, str) else safe_str(key, 200)
            self.spend(len(skey) + 4)
            out[skey] = self.render(value, depth + 1)
        if keep < n:
            self.shrunk = True
            out["…"] = self.text(f"还有 {n - keep} 个字段未显示（共 {n} 个）")
        return out

    def sequence(self, seq: Any, total: int, depth: int) -> list:
        keep = min(len(seq), total) if self.items is None else min(len(seq), self.items)
        out = []
        self.spend(2)
        for item in itertools.islice(seq, keep):
            if out:
                self.spend(2)  # ", " between items
            out.append(self.render(item, depth + 1))
        if keep < total:
            self.shrunk = True
            if out:
                self.spend(2)
            out.append(self.text(f"…还有 {total - keep} 项未显示（共 {total} 项）"))
        return out


def _bytes_text(head: bytes, size: int) -> str:
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


def _shrink(obj: Any, max_chars: int) -> tuple[Any, bool]:
    for items, strlen in _LEVELS:
        renderer = _Renderer(items, strlen, max_chars)
        try:
            value = renderer.render(obj)
        except _OverBudget:
            continue
        except RecursionError:
            continue
        # `used` bounds the JSON length up to escaping (at most 6 characters per character),
        # so small values skip the check serialization
        if renderer.used * 6 <= max_chars or len(dumps(value)) <= max_chars:
            return value, renderer.shrunk
    note = f"…（结果过大，已省略；原类型 {type(obj).__name__}）"
    return note[: max(max_chars - 2, 1)], True


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
        raise ValueError(f"max_chars must be an int >= 3 (room for the note \"…\"), got {max_chars!r}")
    return _shrink(obj, max_chars)[0]


def dumps(value: Any) -> str:
    """Compact JSON text, Chinese kept readable (ensure_ascii=False)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


# --- the five strategies ----------------------------------------------------------

def to_markdown_table(records: list[dict], max_rows: int = 20) -> str:
    """Render a list of flat dicts as a Markdown table (strategy 5, for people to read).

    A row that is not a dict is shown in a single "value" column; never raises.
    """
    rows = [row if isinstance(row, dict) else {"value": row} for row in itertools.islice(records, max_rows)]
    columns: list[str] = []
    for row in rows:
        for key in row:
            if safe_str(key) not in columns:
                columns.append(safe_str(key))

    def cell(value: Any) -> str:
        return safe_str(value, 80).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lookup = {safe_str(k): v for k, v in row.items()}
        lines.append("| " + " | ".join(cell(lookup.get(c, "")) for c in columns) + " |")
    if len(records) > len(rows):
        lines.append(f"\n（仅显示前 {len(rows)} 行，共 {len(records)} 行）")
    return "\n".join(lines)


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value[:50])


def _stat_number(value: Any) -> bool:
    """A number statistics can use: finite, not bool, and small enough for float() (huge ints overflow)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value.bit_length() <= 1000
    return isinstance(value, float) and math.isfinite(value)


def _query_summary(records: list, max_chars: int) -> dict:
    """First rows, the exact count, and simple statistics of numeric columns."""
    n = len(records)
    step = max(n // STATS_ROWS, 1)
    sample = records[::step][:STATS_ROWS]
    stats: dict[str, dict] = {}
    for row in sample:
        if not isinstance(row, dict):
            continue
        for key, value in row.items():
            if _stat_number(value):
                s = stats.setdefault(safe_str(key, 100), {"count": 0, "sum": 0, "min": value, "max": value})
                s["count"] += 1
                s["sum"] += value
                s["min"] = min(s["min"], value)
                s["max"] = max(s["max"], value)
    for s in stats.values():
        s["mean"] = round(s["sum"] / s["count"], 4)
        if step > 1:  # a sample's sum and count are not the table's: leave them out, never mislead
            s["sampled_rows"] = s.pop("count")
            del s["sum"]
    note = ("统计覆盖全部行" if step == 1 else
            f"统计基于均匀抽取的 {len(sample)} 行：mean 是估计值，min/max 只是样本中的，没有给出总和")
    summary = {"row_count": n, "rows_shown": 0, "rows": [], "stats": stats,
               "note": f"结果共 {n} 行，只显示前几行；{note}。需要更多可缩小查询条件再查。"}
    for k in (20, 10, 5, 3, 1, 0):  # as many whole rows as fit unshrunk
        summary["rows"] = records[:k]
        summary["rows_shown"] = min(k, n)
        if not _shrink(summary, max_chars)[1]:
            break
    return summary


_STATUS_KEYS = ("status", "ok", "success", "error", "message")


def _write_summary(value: Any) -> Any:
    """A write result needs only its status and id."""
    if not isinstance(value, dict):
        return value
    keep = {k: v for k, v in value.items() if isinstance(k, str) and
            (k in _STATUS_KEYS or k == "id" or k.endswith("_id") or k.endswith("Id"))}
    return keep or {"status": "ok"}


def _error_text(code: str | None, message: str, error_type: str | None = None) -> str:
    kind = {"retryable": "可重试", "fatal": "不可重试", "partial": "部分成功"}.get(error_type or "", "")
    tag = "，".join(t for t in (kind, code) if t)
    return f"❌ 工具执行失败{f'（{tag}）' if tag else ''}: {message}"


def parse_tool_result(result: Any, max_tokens: int = 2000, kind: ToolKind | None = None, *,
                      style: Literal["json", "markdown"] = "json",
                      context_tokens: int | None = None, read_share: float = 0.2) -> str:
    """Turn any tool output into text for the model, within about `max_tokens` tokens.

    * str: passed through when it fits; JSON text over budget shrinks as JSON;
      other long text keeps head + tail (smart_truncate).
    * dict / list / other values: compact JSON, shrunk structurally to fit.
    * errors (an Exception, a failed ToolResult, a {"status": "error",
      "error": ...} envelope): one readable line saying what failed and whether
      retrying helps. {"error": None} is a success, not a failure.
    * style="markdown": a list of records becomes a Markdown table.
    * kind="query": over budget, first rows + row count + numeric statistics.
      kind="read": text over `read_share` of `context_tokens` is cut head+tail.
      kind="write": only status and id fields are kept.

    The budget counts the truncation marker too. A budget under about 15
    tokens holds the marker alone ("…（已省略 N 字符）…", about 12 tokens: all
    N characters left out, said exactly), so such an output may exceed the
    budget, up to 15 tokens; Chinese text needs about 40 tokens before any of
    its characters survive the marker.

    Never raises for any `result`; raises ValueError for max_tokens < 1 or an
    unknown kind/style.
    """
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if kind not in (None, "query", "read", "write"):
        raise ValueError(f"kind must be None, 'query', 'read' or 'write', got {kind!r}")
    if style not in ("json", "markdown"):
        raise ValueError(f"style must be 'json' or 'markdown', got {style!r}")
    if kind == "read" and context_tokens:
        max_tokens = max(1, min(max_tokens, int(context_tokens * read_share)))
    budget = max_tokens * CHARS_PER_TOKEN
    for _ in range(24):  # shrink the character budget until the token estimate fits
        text = _clean(_parse(result, budget, kind, style))  # no lone surrogate reaches the model
        tokens = estimate_tokens(text) if len(text) < 4 * budget else max_tokens + 1
        if tokens <= max_tokens or budget <= 16:
            return text
        # at least 10% smaller each round: shrinking goes in steps, the same budget may not move
        budget = max(16, min(int(budget * 0.9), int(budget * max_tokens / tokens * 0.95)))
    return text


def _cut(text: str, budget: int) -> str:
    """A one-line message (an error, a partial note) cut to at most `budget` characters."""
    return text if len(text) <= budget else text[: max(budget - 1, 0)] + "…"


def _with_missing(missing: Any, data: Any, budget: int, kind: ToolKind | None, style: str) -> str:
    """A partial result: the note on what is missing, then the data, together within `budget`."""
    note = _cut(f"⚠️ 部分成功，缺失：{safe_str(missing)}", max(budget // 4, 1))
    return f"{note}\n{_parse(data, max(budget - len(note) - 1, 1), kind, style)}"


def _parse(result: Any, budget: int, kind: ToolKind | None, style: str) -> str:
    if isinstance(result, BaseException):
        info = classify_error(result)
        return _cut(_error_text(info.code, info.message, info.error_type), budget)
    if isinstance(result, ToolResult):
        if result.status == "error":
            return _cut(_error_text(result.error_code, safe_str(result.error), result.error_type), budget)
        if result.status == "success":
            return _parse(result.data, budget, kind, style)
        return _with_missing(result.missing or result.error, result.data, budget, kind, style)
    if isinstance(result, PartialResult):
        return _with_missing(result.missing, result.data, budget, kind, style)
    envelope = error_from_envelope(result)
    if envelope is not None:
        return _cut(_error_text(envelope.code, envelope.message, envelope.error_type), budget)
    if style == "markdown" and _is_records(result):
        table = to_markdown_table(result)
        if len(table) <= budget:
            return table
    data, _ = fit_for_model(result, budget, kind)
    return data if isinstance(data, str) else dumps(data)


def fit_for_model(value: Any, max_chars: int, kind: ToolKind | None = None) -> tuple[Any, bool]:
    """(what the model should see, whether anything was left out), within `max_chars`.

    Strings stay strings (JSON text shrinks as JSON, other text head+tail);
    everything else becomes a JSON-serializable value whose JSON fits. Tool
    kinds: "write" keeps only status and id fields; "query" turns too many
    records into first rows + count + statistics. Work is bounded by max_chars.
    """
    if value is None or value is True or value is False:  # the common no-data result: nothing to do
        return value, False
    if kind == "write":
        value = _write_summary(value)
    if isinstance(value, (bytes, bytearray)):
        value = _bytes_text(bytes(value[: max_chars * 4]), len(value))
    if isinstance(value, str):
        text = _parse_text(value, max_chars)
        return text, len(text) != len(value) or text != value
    if kind == "query" and _is_records(value) and len(value) > 1:
        shrunk_value, shrunk = _shrink(value, max_chars)
        if shrunk:
            return shrink_json(_query_summary(value, max_chars), max_chars), True
        return shrunk_value, False
    return _shrink(value, max_chars)


def _parse_text(text: str, budget: int) -> str:
    if len(text) <= budget:
        return _clean(text)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") and len(text) <= JSON_TEXT_PARSE_LIMIT:
        try:
            return dumps(shrink_json(json.loads(text), budget))
        except (ValueError, RecursionError):
            pass
    marker_room = 40
    head = max((budget - marker_room) * 2 // 3, 0)
    tail = max(budget - marker_room - head, 0)
    return _clean(smart_truncate(text, max_chars=budget, keep_head=head, keep_tail=tail))
