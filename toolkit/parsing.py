"""Turning raw tool output into text for the model: parse_tool_result and its five strategies.

The five strategies of the original course (pass-through, JSON, head+tail summary,
error conversion, Markdown table) plus preprocessing by tool kind (query /
read / write), within a token budget. Two rules hold everywhere:

* JSON stays JSON. Over budget, structures shrink structurally (toolkit.shrink);
  text is never cut in the middle of a JSON token (toolkit.truncate).
* Work is bounded by the budget, not by the input.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Literal

from .fitting import ToolKind, fit_for_model, is_records
from .redaction import safe_str
from .results import PartialResult, ToolResult, classify_error, error_from_envelope
from .shrink import clean_text, dumps

__all__ = ["parse_tool_result", "to_markdown_table", "estimate_tokens", "CHARS_PER_TOKEN"]

CHARS_PER_TOKEN = 4          # the original course's rough rule, for ASCII text


def estimate_tokens(text: str) -> int:
    """Rough token count: 4 ASCII characters or 1 CJK character ≈ 1 token. TypeError (in Chinese) for a value
    that is not text."""
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens 估算的是一段文字，收到 {type(text).__name__}：请先把它转成文字，"
                        "例如 estimate_tokens(json.dumps(value, ensure_ascii=False))")
    ascii_count = len(text.encode("ascii", "ignore"))  # = characters below 128, at C speed
    return math.ceil(ascii_count / CHARS_PER_TOKEN + (len(text) - ascii_count))


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


def _error_text(code: str | None, message: str, error_type: str | None = None) -> str:
    kind = {"retryable": "可重试", "fatal": "不可重试", "partial": "部分成功"}.get(error_type or "", "")
    tag = "，".join(t for t in (kind, code) if t)
    return f"✘ 工具执行失败{f'（{tag}）' if tag else ''}: {message}"


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
    tokens holds the marker alone, a whole one saying what was left out:
    text "…（已省略 N 字符）…" (about 12 tokens), bytes "…（共 N 字节）", any
    other value "…（共 N 项，均已省略）" or "…（共 N 个字段，均已省略）" (12 to 14
    tokens), never a marker cut short; such an output may exceed the budget,
    up to 15 tokens. Chinese text needs about 40 tokens before any of its
    characters survive the marker.

    Raises ValueError (in Chinese) for max_tokens < 1 or an unknown kind/style.
    """
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens 是 token 预算，应该是不小于 1 的整数（例如 500），收到的是 {max_tokens!r}：请改成 1 或更大")
    if kind not in (None, "query", "read", "write"):
        raise ValueError(f"kind 只能是 None、'query'（查询）、'read'（读取）或 'write'（写入），收到的是 {kind!r}：请改成其中之一")
    if style not in ("json", "markdown"):
        raise ValueError(f"style 只能是 'json' 或 'markdown'，收到的是 {style!r}：请改成其中之一")
    if kind == "read" and context_tokens:
        max_tokens = max(1, min(max_tokens, int(context_tokens * read_share)))
    budget = max_tokens * CHARS_PER_TOKEN
    for _ in range(24):  # shrink the character budget until the token estimate fits
        text = clean_text(_parse(result, budget, kind, style))  # no lone surrogate reaches the model
        tokens = estimate_tokens(text) if len(text) < 4 * budget else max_tokens + 1
        if tokens <= max_tokens:
            return text
        if budget <= 16:  # the floor: a whole marker fits in 15 tokens; a short one-line message in CJK may not
            return _cut_tokens(text, 15) if tokens > 15 and len(text) < 4 * budget else text
        # at least 10% smaller each round: shrinking goes in steps, the same budget may not move
        budget = max(16, min(int(budget * 0.9), int(budget * max_tokens / tokens * 0.95)))
    return text


def _cut(text: str, budget: int) -> str:
    """A one-line message (an error, a partial note) cut to at most `budget` characters."""
    return text if len(text) <= budget else text[: max(budget - 1, 0)] + "…"


def _cut_tokens(text: str, limit: int) -> str:
    """`text` cut, with "…", to at most `limit` estimated tokens (for a one-line message at the budget floor)."""
    while len(text) > 1 and estimate_tokens(text) > limit:
        text = text[:-2] + "…"
    return text


def _with_missing(missing: Any, data: Any, budget: int, kind: ToolKind | None, style: str) -> str:
    """A partial result: the note on what is missing, then the data, together within `budget`."""
    note = _cut(f"⚠ 部分成功，缺失：{safe_str(missing)}", max(budget // 4, 1))
    return f"{note}\n{_parse(data, max(budget - len(note) - 1, 1), kind, style)}"


def _parse(result: Any, budget: int, kind: ToolKind | None, style: str) -> str:
    if isinstance(result, BaseException):
        info = classify_error(result)
        return _cut(_error_text(info.error_code, info.message, info.error_type), budget)
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
        return _cut(_error_text(envelope.error_code, envelope.message, envelope.error_type), budget)
    if style == "markdown" and is_records(result):
        table = to_markdown_table(result)
        if len(table) <= budget:
            return table
    data, _ = fit_for_model(result, budget, kind)
    return data if isinstance(data, str) else dumps(data)
