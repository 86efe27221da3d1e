"""Exercise 01: html_table_to_markdown(page, max_chars) — a web page's table as Markdown, whole rows within a budget.

Chapter 01 builds parse_tool_result (errors read by value, JSON kept valid within a budget); this exercise
is the fifth strategy it leaves to the student: rich text to a Markdown table, cut at row boundaries with
the rows shown and the total said."""
from __future__ import annotations

import html
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

# The same report laid out as pages are: attributes on every tag, cells broken over lines, runs of spaces.
STYLED_PAGE = """<html><body>
<table id="q1" class="report striped">
  <tr class="head"><th scope="col">类别</th><th scope="col">销售额</th><th>备注</th></tr>
  <tr class="row odd" data-id="1"><td>显示器</td><td align="right">4495</td><td>季度
      <b>最高</b></td></tr>
  <tr class='row even'><td>键盘</td><td align="right">2985</td><td>  含   多个\t空格  </td></tr>
  <tr
      class="row odd"><td>鼠标</td><td align="right">2212</td><td>第一行<br>第二行</td></tr>
</table>
</body></html>"""
STYLED_ROWS = [["类别", "销售额", "备注"], ["显示器", "4495", "季度 最高"], ["键盘", "2985", "含 多个 空格"],
               ["鼠标", "2212", "第一行第二行"]]
# Two tables with different columns: only the first is the answer ("第一张").
TWO_TABLES = """<html><body><h2>汇总</h2>
<table><tr><th>季度</th><th>总销售额</th></tr><tr><td>Q1</td><td>9692</td></tr></table>
<h2>明细</h2>
<table><tr><th>类别</th><th>销售额</th></tr><tr><td>显示器</td><td>4495</td></tr><tr><td>键盘</td><td>2985</td></tr>
</table></body></html>"""

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


def _call(play: Any, page: str, max_chars: int = 2000) -> str:
    return expect(play(page, max_chars), str)


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
    out = _call(play, STYLED_PAGE)
    rows = table_rows(out)
    if len(rows) < len(STYLED_ROWS):
        raise Fail(f"带属性的行（<tr class=\"row odd\">、<tr 换行 class=…>）也是表格的行：应读出 {len(STYLED_ROWS)} 行，"
                   f"得到 {len(rows)} 行：{rows}")
    broken = any(line.strip().startswith("|") and not line.strip().endswith("|") for line in out.splitlines())
    for got, row in zip(rows, STYLED_ROWS):
        if got != row:
            raise Fail(f"单元格里的换行、制表符和连续空格要合并成一个空格（<br> 这样的标签去掉）：应为 {row}，得到 {got}"
                       + ("；单元格里留着换行，Markdown 的这一行就断了" if broken else ""))


def check_first_table(play: Any) -> None:
    rows = table_rows(_call(play, TWO_TABLES))
    want = [["季度", "总销售额"], ["Q1", "9692"]]
    if rows != want:
        raise Fail(f"页面上有两张表格时只转换第一张（任务说的是「第一张」）：应读出 {want}，得到 {rows}")


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


def _big_table(n: int) -> list[list[str]]:
    return [["日期", "类别", "销售额"]] + [[f"2026-04-{i % 30 + 1:02d}", "显示器键盘鼠标"[i % 3 * 2:i % 3 * 2 + 2], f"{100 + i * 7}"]
                                         for i in range(n)]


CASES = [(n, m) for n in (30, 120, 400) for m in (200, 600, 2000)]
SHOWN = re.compile(r"前\s*(\d+)\s*行")
TOTAL = re.compile(r"共\s*(\d+)\s*行")


def _line(row: list[str]) -> str:
    return "| " + " | ".join(row) + " |"


def _over(n: int, max_chars: int) -> bool:
    rows = _big_table(n)
    return len("\n".join(_line(r) for r in rows)) + len(rows[0]) * 6 > max_chars


def check_fits_unchanged(play: Any) -> None:
    out = _call(play, SALES_PAGE, 2000)
    if "仅显示" in out or SHOWN.search(out):
        raise Fail(f"表格放得下时不要加「仅显示前几行」的说明：{out[-60:]!r}")
    if len(table_rows(out)) != 4:
        raise Fail(f"放得下的表格应完整输出表头和 3 行数据，读回 {len(table_rows(out))} 行")


def check_budget(play: Any) -> None:
    for n, max_chars in CASES:
        out = _call(play, _html_table(_big_table(n)), max_chars)
        if not table_rows(out):  # an answer that returns no table at all is not "within budget"
            raise Fail(f"{n} 行的表格、max_chars={max_chars} 时输出里没有表格：{out[:60]!r}")
        if len(out) > max_chars:
            raise Fail(f"{n} 行的表格、max_chars={max_chars} 时输出有 {len(out)} 个字符（说明文字也算在内）")


def check_whole_rows(play: Any) -> None:
    for n, max_chars in CASES:
        if not _over(n, max_chars):
            continue
        rows = _big_table(n)
        out = _call(play, _html_table(rows), max_chars)
        got = table_rows(out)
        if not got or got != rows[:len(got)]:
            bad = next((g for g, r in zip(got, rows) if g != r), got[-1] if got else None)
            raise Fail(f"{n} 行、max_chars={max_chars}：表格行应是原表的整行（从表头开始），这一行不对：{bad}")
        if not _separator_after_header(out):
            raise Fail("截断后表头下一行仍应是分隔行 | --- |")
        if len(got) < 2:
            raise Fail(f"{n} 行、max_chars={max_chars}：预算放得下数据行，却一行也没留")
        longest = max(len(_line(r)) for r in rows)
        if len(out) < max_chars - 2 * longest - 40:
            raise Fail(f"{n} 行、max_chars={max_chars}：只用了 {len(out)} 个字符就停了，预算还能再放几行")


def check_count(play: Any) -> None:
    for n, max_chars in CASES:
        if not _over(n, max_chars):
            continue
        out = _call(play, _html_table(_big_table(n)), max_chars)
        last = [line for line in out.splitlines() if line.strip()][-1]
        shown, total = SHOWN.search(last), TOTAL.search(last)
        if not (shown and total):
            raise Fail(f"截断后最后一行要说明「仅显示前 k 行，共 n 行」，得到 {last!r}")
        really = len(table_rows(out)) - 1
        if int(shown.group(1)) != really:
            raise Fail(f"说明写显示了前 {shown.group(1)} 行，实际显示了 {really} 行数据（表头不算）")
        if int(total.group(1)) != n:
            raise Fail(f"说明写共 {total.group(1)} 行，原表有 {n} 行数据（表头不算）")


def check_no_table(play: Any) -> None:
    out = _call(play, "<html><body><h1>公告</h1><p>本页没有表格，只有文字。</p></body></html>")
    if "没有表格" not in out or table_rows(out):
        raise Fail(f"没有 <table> 的页面应返回「（页面里没有表格）」，得到 {out[:80]!r}")
    if "没有表格" in _call(play, SALES_PAGE):  # a constant answer says it for every page
        raise Fail("有表格的页面也返回了「没有表格」：只有找不到 <table> 时才这样说")


EXERCISE = Exercise("01", "01_parse_tool_result", "富文本转 Markdown：HTML 表格，超预算时按整行保留", "html_table_to_markdown", (
    Check("html_table_header", "HTML 表格的表头和分隔行", "第一个 <tr> 的单元格是表头，下一行写 | --- | --- |",
          check_html_header),
    Check("html_table_rows", "HTML 表格的数据行（去掉 <b> 等标签，| 转义为 \\|，带属性的 <tr>，空白合并）",
          "每个 <tr …> 一行（它可能带 class 等属性）；单元格里的标签去掉、html.unescape、"
          "\" \".join(文字.split()) 合并空白、竖线写成 \\|", check_html_rows),
    Check("first_table_only", "页面上有几张表格时只转换第一张", "re.search 找第一个 <table>…</table>，不要 findall 后拼起来或取最后一个",
          check_first_table),
    Check("html_table_random", "随机生成的 60 张表格都能原样读回（hypothesis，含 |、&lt;、空单元格）",
          "注意空单元格、&lt; 之类的转义字符和 | 竖线", check_html_random),
    Check("fits_unchanged", "放得下的表格完整输出，不加说明", "先拼出完整表格，放得下就直接返回", check_fits_unchanged),
    Check("within_budget", "超预算的表格输出不超过 max_chars（说明文字也算在内）",
          "先留出说明那一行的长度，再一行一行地加数据行", check_budget),
    Check("whole_rows", "超预算时按整行保留：表头 + 分隔行 + 前几行，不切半行，也不浪费预算",
          "一行一行累加，下一行放不下就停；不要对整段文字 text[:max_chars]", check_whole_rows),
    Check("count_said", "截断后最后一行说明「仅显示前 k 行，共 n 行」，k 和 n 都准（表头不算）",
          "k 是留下的数据行数，n 是原表的数据行数", check_count),
    Check("no_table", "没有表格的页面返回「（页面里没有表格）」", "找不到 <table> 时直接返回这句话", check_no_table),
))
