"""Exercise 01: parse_tool_output(raw, max_chars) — errors read right, HTML tables become Markdown."""
from __future__ import annotations

import html
import json
import re
from typing import Any

from ._core import Check, Exercise, Fail, expect
from ._props import property_check

SALES_PAGE = """<html><head><title>2024 年第一季度销售报表</title></head><body>
<h1>2024 年第一季度销售报表</h1>
<p>单位：元。数据来自 sales.csv。</p>
<table class="report">
  <thead><tr><th>类别</th><th>销售额</th><th>备注</th></tr></thead>
  <tbody>
    <tr><td>显示器</td><td>4495</td><td><b>最高</b></td></tr>
    <tr><td>键盘</td><td>2985</td><td>含 | 竖线</td></tr>
    <tr><td>鼠标</td><td>2212</td><td></td></tr>
  </tbody>
</table>
<p>总销售额 9692。</p>
</body></html>"""

_SPLIT = re.compile(r"(?<!\\)\|")


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of every Markdown table line in `markdown`, separator lines left out."""
    rows = []
    for line in str(markdown).splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip().replace("\\|", "|") for c in _SPLIT.split(line)[1:-1]]
        if cells and all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        rows.append(cells)
    return rows


def _separator_after_header(markdown: str) -> bool:
    lines = [ln.strip() for ln in str(markdown).splitlines() if ln.strip().startswith("|")]
    return len(lines) >= 2 and bool(re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", lines[1].replace(" ", "")))


def _html_table(rows: list[list[str]]) -> str:
    head, *body = rows
    cells = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    out = [f"<table><tr>{cells}</tr>"]
    for row in body:
        out.append("<tr>" + "".join(f"<td><span>{html.escape(c)}</span></td>" for c in row) + "</tr>")
    return "\n".join(out) + "\n</table>"


def _call(play: Any, raw: Any, max_chars: int = 2000) -> str:
    return expect(play(raw, max_chars), str)


def check_error_none(play: Any) -> None:
    raw = {"status": "ok", "data": {"total_sales": 9692, "highest_category": "显示器"}, "error": None}
    out = _call(play, raw)
    if out.lstrip().startswith("❌") or "失败" in out:
        raise Fail(f"{{'error': None}} 被当成了失败：{out[:80]!r}")
    if "9692" not in out:
        raise Fail(f"成功结果里的数据丢了（找不到 9692）：{out[:80]!r}")


def check_error_reported(play: Any) -> None:
    cases = [
        ({"status": "error", "data": None, "error": {"code": "FILE_NOT_FOUND", "message": "找不到 sales.csv"}},
         "找不到 sales.csv"),
        ({"error": "权限不足"}, "权限不足"),
    ]
    for raw, message in cases:
        out = _call(play, raw)
        if not out.startswith("❌ 工具执行失败"):
            raise Fail(f"错误结果应以「❌ 工具执行失败」开头，得到 {out[:80]!r}")
        if message not in out:
            raise Fail(f"错误说明里没有工具给的原因「{message}」：{out[:80]!r}")


def check_status_error(play: Any) -> None:
    for raw in ({"status": "error", "data": None, "error": None},
                {"status": "error", "message": "数据库连接失败"}):
        out = _call(play, raw)
        if not out.startswith("❌ 工具执行失败"):
            raise Fail(f"{raw!r} 的 status 是 \"error\"：即使 error 是空的，也是失败，应以「❌ 工具执行失败」开头，"
                       f"得到 {out[:80]!r}")


def check_html_header(play: Any) -> None:
    out = _call(play, SALES_PAGE)
    rows = table_rows(out)
    if not rows:
        raise Fail(f"输出里没有以 | 开头的 Markdown 表格行：{out[:80]!r}")
    if rows[0] != ["类别", "销售额", "备注"]:
        raise Fail(f"表头应为 ['类别', '销售额', '备注']，得到 {rows[0]}")
    if not _separator_after_header(out):
        raise Fail("表头下一行应是分隔行，例如 | --- | --- | --- |")


def check_html_rows(play: Any) -> None:
    rows = table_rows(_call(play, SALES_PAGE))
    want = [["显示器", "4495", "最高"], ["键盘", "2985", "含 | 竖线"], ["鼠标", "2212", ""]]
    if rows[1:] != want:
        raise Fail(f"数据行应为 {want}，得到 {rows[1:]}")


def check_html_random(play: Any) -> None:
    from hypothesis import strategies as st

    cell = st.text(alphabet=st.sampled_from(list("显示器键盘鼠标abcXYZ0123456789 |<>&")), max_size=8).map(
        lambda s: " ".join(s.split()))
    tables = st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(cell, min_size=n, max_size=n),
                                                          min_size=1, max_size=5))

    def classify(rows: list[list[str]]) -> set[str]:
        cells = [c for row in rows for c in row]
        return {label for label, hit in (("单元格里有 |", any("|" in c for c in cells)),
                                         ("有 < > & 要转义", any(ch in c for c in cells for ch in "<>&")),
                                         ("有空单元格", "" in cells), ("有数据行", len(rows) > 1),
                                         ("不止一列", len(rows[0]) > 1)) if hit}

    def test(rows: list[list[str]]) -> None:
        out = _call(play, _html_table(rows), 4000)
        got = table_rows(out)
        if got != rows:
            raise Fail(f"表格 {rows} 转换后读回来是 {got}（输出 {out[:100]!r}）")

    property_check(tables, test, examples=60, classify=classify,
                   cover={"单元格里有 |": 10, "有 < > & 要转义": 10, "有空单元格": 10, "有数据行": 30, "不止一列": 30})


def check_json(play: Any) -> None:
    for raw in ({"城市": "上海", "降水量": 0, "有预警": False, "预警": None}, ["晴", "多云"], 0, False):
        out = _call(play, raw)
        try:
            back = json.loads(out)
        except ValueError:
            raise Fail(f"{raw!r} 应变成 JSON 文本，得到 {out[:80]!r}（不是合法 JSON，例如 Python 的 repr）") from None
        if back != raw or type(back) is not type(raw):
            raise Fail(f"{raw!r} 转成 JSON 后内容变了：{out[:80]!r}")
        if "上海" in str(raw) and "上海" not in out:
            raise Fail("中文被转义成了 \\uXXXX：json.dumps 要加 ensure_ascii=False")


def check_plain_text(play: Any) -> None:
    text = "搜索结果：Python MCP 相关内容 3 条"
    out = _call(play, text)
    if out != text:
        raise Fail(f"不超预算的普通文本应原样返回，得到 {out[:80]!r}")


def _budget_input(kind: int, size: int) -> Any:
    if kind == 0:
        return "第一行\n" + "数据" * size
    if kind == 1:
        return {f"字段{i}": "值" * 5 for i in range(size // 10)}
    if kind == 2:
        return [{"id": i, "name": f"商品{i}"} for i in range(size // 10)]
    return _html_table([["a", "b"]] + [[f"{i}", "值" * 5] for i in range(size // 20)])


def check_budget(play: Any) -> None:
    from hypothesis import strategies as st

    cases = st.tuples(st.integers(0, 3), st.sampled_from([50, 300, 2000, 20000]), st.sampled_from([60, 200, 1000]))

    def classify(case: tuple[int, int, int]) -> set[str]:
        kind, size, max_chars = case
        raw = _budget_input(kind, size)
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return {("超出预算" if len(text) > 2 * max_chars else "可能不超预算"), ["文本", "dict", "list", "HTML 表格"][kind]}

    def test(case: tuple[int, int, int]) -> None:
        kind, size, max_chars = case
        raw = _budget_input(kind, size)
        out = _call(play, raw, max_chars)
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时输出有 {len(out)} 个字符（输入类型 {type(raw).__name__}）")

    property_check(cases, test, examples=30, classify=classify,
                   cover={"超出预算": 15, "文本": 4, "dict": 4, "list": 4, "HTML 表格": 4})


EXERCISE = Exercise("01", "01_parse_tool_result", "解析工具结果：错误判断与 HTML 表格转 Markdown", "parse_tool_output", (
    Check("error_none_is_success", "{'error': None} 是成功，不是失败（原课程用了 'error' in result）",
          "看 error 的值，不是看有没有这个键：error 为 None / 空时是成功", check_error_none),
    Check("error_envelope_reported", "工具报告的错误变成一句「❌ 工具执行失败: 原因」",
          "error 是 dict 时取它的 message；是字符串时直接用", check_error_reported),
    Check("status_error_is_failure", "status 为 \"error\" 的结果是失败，即使 error 是空的",
          "错误的两个条件是「或」：error 的值不为空，或者 status == \"error\"", check_status_error),
    Check("html_table_header", "HTML 表格的表头和分隔行", "第一个 <tr> 的单元格是表头，下一行写 | --- | --- |",
          check_html_header),
    Check("html_table_rows", "HTML 表格的数据行（去掉 <b> 等标签，| 转义为 \\|）",
          "每个 <tr> 一行；单元格里的标签去掉、html.unescape、竖线写成 \\|", check_html_rows),
    Check("html_table_random", "随机生成的 60 张表格都能原样读回（hypothesis，含 |、&lt;、空单元格）",
          "注意空单元格、&lt; 之类的转义字符和 | 竖线", check_html_random),
    Check("json_keeps_values", "dict / list / 0 / False 变成合法 JSON，中文可读，0 和 False 不丢",
          "用 json.dumps(raw, ensure_ascii=False)，不要用 str()", check_json),
    Check("plain_text_unchanged", "不超预算的普通文本原样返回", "字符串且不含 <table> 时直接返回", check_plain_text),
    Check("within_budget", "任何输入的输出都不超过 max_chars（30 个随机输入，一半以上超出预算）", "最后统一检查长度，超出时截断并注明（注明的文字也算在内）",
          check_budget),
))
