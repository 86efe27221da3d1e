"""What the model sees of a tool's output: fit_for_model, by tool kind, and fit_and_redact.

Strings stay strings (JSON text shrinks as JSON, other text keeps head + tail);
everything else becomes a JSON-serializable value whose JSON fits the budget.
The tool's kind changes what is kept: "write" keeps only status and id fields,
"query" turns too many records into first rows + count + statistics.
`fit_and_redact` is the one budget pass of the road: the executor calls it for
every result, and format_tool_message for a raw value it is handed.
"""
from __future__ import annotations

import json
import math
from typing import Any, Literal

from .redaction import safe_str
from .safety import redact_value
from .shrink import bytes_text, clean_text, dumps, fit_json, omitted_notes, shrink_json
from .truncate import smart_truncate

__all__ = ["fit_for_model", "fit_and_redact", "is_records", "ToolKind"]

ToolKind = Literal["query", "read", "write"]

JSON_TEXT_PARSE_LIMIT = 20_000_000  # longer "JSON-looking" text is cut as text
STATS_ROWS = 10_000          # query statistics look at most this many rows


def is_records(value: Any) -> bool:
    """Whether `value` is a list of records (dicts), as a query returns: the shape that has a query summary."""
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
        if not fit_json(summary, max_chars)[1]:
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


def fit_for_model(value: Any, max_chars: int, kind: ToolKind | None = None) -> tuple[Any, bool]:
    """(what the model should see, whether anything was left out), within `max_chars`.

    Strings stay strings (JSON text shrinks as JSON, other text head+tail);
    everything else becomes a JSON-serializable value whose JSON fits. Tool
    kinds: "write" keeps only status and id fields; "query" turns too many
    records into first rows + count + statistics. Work is bounded by max_chars.
    A budget too small for even the truncation marker gives the marker alone,
    saying what was left out, and may exceed max_chars by it: text as
    "…（已省略 N 字符）…" (smart_truncate), any other value as
    "…（共 N 项，均已省略）" / "…（共 N 个字段，均已省略）" (shrink.omitted_notes),
    never a marker cut short. fit_and_redact, for the executor, stays within
    max_chars with a shorter whole marker.
    """
    data, cut = _fit(value, max_chars, kind)
    if cut and isinstance(data, str) and not isinstance(value, str):
        notes = omitted_notes(value)
        if data in notes[1:]:  # only a shorter marker fitted: the one that says what went, as text does
            return notes[0], True
    return data, cut


def _fit(value: Any, max_chars: int, kind: ToolKind | None) -> tuple[Any, bool]:
    if kind == "write":
        value = _write_summary(value)
    if isinstance(value, (bytes, bytearray)):
        size = len(value)
        value = bytes_text(bytes(value[: max_chars * 4]), size)
        suffix = f"…（共 {size} 字节）"  # what bytes_text says after a head: kept whole, after the head that fits
        if value.endswith(suffix) and len(value) > max_chars:
            return clean_text(value[: max(max_chars - len(suffix), 0)]) + suffix, True
    if isinstance(value, str):
        text = _parse_text(value, max_chars)
        return text, len(text) != len(value) or text != value
    if kind == "query" and is_records(value) and len(value) > 1:
        shrunk_value, shrunk = fit_json(value, max_chars)
        if shrunk:
            return shrink_json(_query_summary(value, max_chars), max_chars), True
        return shrunk_value, False
    return fit_json(value, max_chars)


def _parse_text(text: str, budget: int) -> str:
    if len(text) <= budget:
        return clean_text(text)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") and len(text) <= JSON_TEXT_PARSE_LIMIT:
        try:
            return dumps(shrink_json(json.loads(text), budget))
        except (ValueError, RecursionError):
            pass
    marker_room = 40
    head = max((budget - marker_room) * 2 // 3, 0)
    tail = max(budget - marker_room - head, 0)
    return clean_text(smart_truncate(text, max_chars=budget, keep_head=head, keep_tail=tail))


def fit_and_redact(value: Any, max_chars: int, kind: ToolKind | None = None) -> tuple[Any, bool]:
    """(what the model reads of `value`, whether anything was left out): fit_for_model, with a string's
    JSON escapes counted too (a newline is 2 characters in JSON), and anything that looks like a key
    redacted (redaction only ever shortens). None stays None. What reading `value` raises propagates: the
    executor, where a tool's value enters, makes it an error result."""
    if value is None:
        return None, False
    data, cut = _fit(value, max_chars, kind)
    for _ in range(3):
        if not isinstance(data, str) or len(dumps(data)) <= max_chars:
            return redact_value(data), cut
        over = len(dumps(data)) - max_chars
        data, cut = fit_for_model(value, max(len(data) - over - 8, 20), kind)[0], True
    return redact_value(data if len(dumps(data)) <= max_chars else shrink_json(value, max_chars)), True
