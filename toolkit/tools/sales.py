"""The sales-CSV tool of chapter 07: analyze_sales_csv, with the original course code's bugs fixed.

It reads a teaching CSV (columns category, quantity, unit_price) from the
data directory, computes quantity x unit_price per row, and returns totals per
category in the envelope {status, data, source, error}. Fixed against the
original course code: error lines are the real CSV lines (a quoted field may span lines),
numbers must be plain ASCII digits (int() would take "1_000", "+5", "１２"),
a row with more fields than the header is refused (an unquoted "1,099" would
otherwise be read as 1), a file that is not UTF-8 is an INVALID_SALES_CSV, and
the path is confined to the data directory.

The tool's knowledge sits at the end of this file (SALES_KNOWLEDGE): the answer
rules check_answer applies, the suggestion for INVALID_SALES_CSV, and how the
offline model words a sales result.
"""
from __future__ import annotations

import csv
import io
import json
import operator
import re
from decimal import Decimal
from typing import Any, Callable

from ..knowledge import ToolKnowledge
from ..claims import comparison_claims, holds, rank_claims, total_claims
from ._files import DataDir, envelope, error_envelope, find_input

__all__ = ["analyze_sales_csv", "REQUIRED_COLUMNS", "CURRENCY_NOTE", "SALES_KNOWLEDGE"]

REQUIRED_COLUMNS = ("category", "quantity", "unit_price")
CURRENCY_NOTE = "教学数据使用未指定币种的整数金额单位"
MAX_FILE_BYTES = 5_000_000
MAX_DIGITS = 15  # larger values are typos, and int() refuses > 4300 digits anyway
_UNSIGNED = re.compile(r"[ \t]*([0-9]+)[ \t]*")
_NEGATIVE = re.compile(r"[ \t]*-[ \t]*[0-9]+[ \t]*")


class _BadCsv(ValueError):
    """A problem in the file, with the CSV line it is on."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def analyze_sales_csv(path: str = "sales.csv", *, data_dir: DataDir = None) -> dict:
    """Total sales per category of a CSV in data/input/ (default sales.csv).

    `data_dir` reads from another folder instead (see toolkit.tools.data_dir);
    it is not part of the tool's schema, so the model cannot choose it.

    Returns {"status": "ok", "data": {row_count, total_sales, category_sales
    (ranked, ties by name), highest_category, highest_sales, currency_note},
    "source": ["data/input/..."], "error": None}. Never raises: a refused path
    gives PATH_NOT_ALLOWED, a missing file FILE_NOT_FOUND, an unreadable one
    FILE_UNREADABLE, and bad content (no header, a missing column, an empty
    category, a number that is not a non-negative ASCII integer, a row with
    too many fields, no data rows, not UTF-8) INVALID_SALES_CSV whose message
    and "line" name the CSV line.
    """
    where = find_input(path, data_dir)
    if isinstance(where, dict):
        return where
    real, logical = where
    try:
        raw = real.read_bytes() if real.stat().st_size <= MAX_FILE_BYTES else None
    except OSError as exc:
        return error_envelope("FILE_UNREADABLE", f"无法读取 {logical}（{type(exc).__name__}），请检查文件权限",
                              [logical])
    try:
        if raw is None:
            raise _BadCsv(f"文件超过 {MAX_FILE_BYTES // 1_000_000} MB，不像教学销售数据", 1)
        return envelope(_summarize(_rows(_decode(raw))), [logical])
    except _BadCsv as exc:
        return error_envelope("INVALID_SALES_CSV", f"{logical} {exc}", [logical], line=exc.line)


def _decode(raw: bytes) -> str:
    """UTF-8 text (a BOM is allowed); otherwise a _BadCsv naming the first bad line."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _BadCsv(f"第 {line} 行不是 UTF-8 编码（可能是 GBK/ANSI），请把文件另存为 UTF-8 后再试", line) from None


def _where(start: int, end: int) -> str:
    return f"第 {start} 行" if start == end else f"第 {start}-{end} 行"


def _rows(text: str) -> list[tuple[int, str, int, int]]:
    """(line, category, quantity, unit_price) for each data row; blank lines are skipped."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    rows: list[tuple[int, str, int, int]] = []
    start = 1
    try:
        for record in reader:
            end = reader.line_num
            if any(field.strip() for field in record):
                if header is None:
                    header = _check_header(record, start)
                else:
                    rows.append(_parse_row(record, header, start, end))
            start = end + 1
    except csv.Error as exc:
        raise _BadCsv(f"第 {reader.line_num} 行 CSV 格式错误：{exc}", reader.line_num) from None
    if header is None:
        raise _BadCsv("是空文件：第 1 行应是表头 category,quantity,unit_price", 1)
    if not rows:
        raise _BadCsv(f"只有表头，没有数据行（第 {start} 行起为空）", start)
    return rows


def _check_header(record: list[str], line: int) -> list[str]:
    header = [name.strip() for name in record]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise _BadCsv(f"第 {line} 行（表头）缺少列：{'、'.join(missing)}；"
                      f"表头必须包含 {','.join(REQUIRED_COLUMNS)}", line)
    doubled = [c for c in REQUIRED_COLUMNS if header.count(c) > 1]
    if doubled:
        raise _BadCsv(f"第 {line} 行（表头）列名重复：{'、'.join(doubled)}", line)
    return header


def _parse_row(record: list[str], header: list[str], start: int, end: int) -> tuple[int, str, int, int]:
    where = _where(start, end)
    if len(record) > len(header):
        raise _BadCsv(f"{where}有 {len(record)} 个字段，但表头只有 {len(header)} 列"
                      "（数字里是否用了逗号？如 1,099 应写成 1099）", start)
    values = dict(zip(header, record))
    category = values.get("category", "").strip()
    if not category:
        raise _BadCsv(f"{where} category 为空", start)
    return start, category, _integer(values, "quantity", where, start), _integer(values, "unit_price", where, start)


def _integer(values: dict[str, str], column: str, where: str, line: int) -> int:
    """A non-negative integer written with ASCII digits 0-9 (spaces around are fine)."""
    if column not in values:
        raise _BadCsv(f"{where}缺少 {column} 的值（字段数少于表头）", line)
    text = values[column]
    match = _UNSIGNED.fullmatch(text)
    if match and len(match.group(1)) <= MAX_DIGITS:
        return int(match.group(1))
    shown = text if len(text) <= 20 else text[:20] + "…"
    if _NEGATIVE.fullmatch(text):
        raise _BadCsv(f"{where} {column} 是负数（“{shown}”），销售数据不能为负", line)
    if match:
        raise _BadCsv(f"{where} {column} 的数值过大（超过 {MAX_DIGITS} 位）", line)
    raise _BadCsv(f"{where} {column} 必须是整数，实际是“{shown}”（只接受 0-9 组成的非负整数）", line)


def _summarize(rows: list[tuple[int, str, int, int]]) -> dict:
    totals: dict[str, int] = {}
    for _, category, quantity, unit_price in rows:
        totals[category] = totals.get(category, 0) + quantity * unit_price
    ranking = sorted(({"category": k, "sales": v} for k, v in totals.items()),
                     key=lambda item: (-item["sales"], item["category"]))
    return {
        "row_count": len(rows),
        "total_sales": sum(totals.values()),
        "category_sales": ranking,
        "highest_category": ranking[0]["category"],
        "highest_sales": ranking[0]["sales"],
        "currency_note": CURRENCY_NOTE,
    }


# --- what the rest of the toolkit learns from this tool (toolkit.knowledge) -------------------

_RELATION_WORDS = {"!=": "不是", ">": "超过", ">=": "不少于", "<": "不到", "<=": "不超过", "~": "约为"}
_COMPARED = {">": (operator.gt, "高于"), ">=": (operator.ge, "不低于"), "<": (operator.lt, "低于"), "<=": (operator.le, "不高于")}


def _sales(data: dict) -> dict[str, Decimal]:
    """category -> sales from the tool's data (category_sales), as Decimals."""
    rows = data.get("category_sales")
    pairs = [(r.get("category"), r.get("sales")) for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    return {c: Decimal(str(v)) for c, v in pairs
            if isinstance(c, str) and c and isinstance(v, (int, float)) and not isinstance(v, bool)}


def _listed(names) -> str:
    return "".join(f"「{n}」" for n in names)


def wrong_top_claims(answer: str, data: dict) -> list[str]:
    """Claims that other categories come first or last ("键盘销售额最高", "最高的是键盘而非显示器")."""
    sales = _sales(data)
    wrong: list[str] = []
    for claim in rank_claims(answer, sales):
        claimed = [sales[n] for n in claim.names]
        others = [v for n, v in sales.items() if n not in claim.names]
        ok = not others or (min(claimed) >= max(others) if claim.top else max(claimed) <= min(others))
        if not ok:
            ranked = sorted(sales, key=lambda n: -sales[n] if claim.top else sales[n])[: len(claim.names)]
            word = "最高" if claim.top else "最低"
            wrong.append(f"回答说销售额{word}的是{_listed(claim.names)}，工具结果是{_listed(ranked)}")
    return wrong


def wrong_totals(answer: str, data: dict) -> list[str]:
    """A total stated against the data ("三个类别共计 4495", "总销售 4495", "总销售额不是 9692"), or a
    category's total ("显示器的总销售额 2985")."""
    total = data.get("total_sales")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        return []
    sales = _sales(data)
    wrong: list[str] = []
    for claim in total_claims(answer, sales):
        actual = sum((sales[n] for n in claim.names), Decimal(0)) if claim.names else Decimal(str(total))
        if holds(claim.relation, actual, claim.value, claim.upper):
            continue
        whose = f"{'、'.join(claim.names)}的销售额" if claim.names else "总销售额"
        if claim.relation == "=":
            said = f"回答中的{whose}写成了 {claim.value.text}"
        elif claim.upper is not None:
            said = f"回答说{whose}在 {claim.value.text} 到 {claim.upper.text} 之间"
        else:
            said = f"回答说{whose}{_RELATION_WORDS[claim.relation]} {claim.value.text}"
        wrong.append(f"{said}，工具结果是 {actual.normalize():f}")
    return wrong


def wrong_comparisons(answer: str, data: dict) -> list[str]:
    """One category said to be above or below another against the data ("键盘比显示器高")."""
    sales = _sales(data)
    return [f"回答说「{c.first}」的销售额{_COMPARED[c.relation][1]}「{c.second}」，工具结果是 {sales[c.first]} 与 {sales[c.second]}"
            for c in comparison_claims(answer, sales) if not _COMPARED[c.relation][0](sales[c.first], sales[c.second])]


def _ranking(category_sales: Any) -> list[tuple[str, Any]]:
    if isinstance(category_sales, list):
        pairs = [(i.get("category"), i.get("sales")) for i in category_sales if isinstance(i, dict)]
    else:
        pairs = list(category_sales.items()) if isinstance(category_sales, dict) else []
    pairs = [(str(c), s) for c, s in pairs if c is not None and isinstance(s, (int, float)) and not isinstance(s, bool)]
    return sorted(pairs, key=lambda p: -p[1])


def render_sales(tool: str, data: Any, say: Callable[[Any], str]) -> str | None:
    """How the offline model words a sales result: the top category, the total, the ranking."""
    if not (isinstance(data, dict) and {"total_sales", "highest_category", "highest_sales"} <= data.keys()):
        return None
    text = (f"根据工具 {tool} 的计算结果：销售额最高的类别是{say(data['highest_category'])}，"
            f"销售额 {say(data['highest_sales'])}；总销售额 {say(data['total_sales'])}")
    if "row_count" in data:
        text += f"（共 {say(data['row_count'])} 行数据）"
    ranking = _ranking(data.get("category_sales"))
    if ranking:
        text += "。各类别销售额从高到低：" + " > ".join(f"{say(c)} {json.dumps(s)}" for c, s in ranking)
    if data.get("currency_note"):
        text += f"。金额单位：{say(data['currency_note'])}"
    return text + "。"


SALES_KNOWLEDGE = ToolKnowledge(
    required={"highest_category": "销售额最高的类别", "total_sales": "总销售额"},
    answer_rules=(wrong_top_claims, wrong_totals, wrong_comparisons),
    suggestions={"INVALID_SALES_CSV": "告诉用户数据文件有误（指出哪一行），不要编造结果"},
    labels={"category": "类别", "quantity": "数量", "unit_price": "单价", "sales": "销售额", "row_count": "行数",
            "total_sales": "总销售额", "category_sales": "各类别销售额", "highest_category": "销售额最高的类别",
            "highest_sales": "最高销售额", "currency_note": "金额单位", "line": "行号"},
    render=render_sales,
)
