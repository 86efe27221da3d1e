"""Exercise 01: parse_tool_output(raw, max_chars) — errors read right, HTML tables become Markdown."""
from __future__ import annotations

import html
import json
import random
import re
from typing import Any, Callable

from ._core import Check, Exercise, Fail

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


def _call(fn: Callable, raw: Any, max_chars: int = 2000) -> str:
    out = fn(raw, max_chars)
    if not isinstance(out, str):
        raise Fail(f"应该返回 str，你返回了 {type(out).__name__}")
    return out


def check_error_none(fn: Callable) -> None:
    raw = {"status": "ok", "data": {"total_sales": 9692, "highest_category": "显示器"}, "error": None}
    out = _call(fn, raw)
    if out.lstrip().startswith("❌") or "失败" in out:
        raise Fail(f"{{'error': None}} 被当成了失败：{out[:80]!r}")
    if "9692" not in out:
        raise Fail(f"成功结果里的数据丢了（找不到 9692）：{out[:80]!r}")


def check_error_reported(fn: Callable) -> None:
    cases = [
        ({"status": "error", "data": None, "error": {"code": "FILE_NOT_FOUND", "message": "找不到 sales.csv"}},
         "找不到 sales.csv"),
        ({"error": "权限不足"}, "权限不足"),
    ]
    for raw, message in cases:
        out = _call(fn, raw)
        if not out.startswith("❌ 工具执行失败"):
            raise Fail(f"错误结果应以「❌ 工具执行失败」开头，得到 {out[:80]!r}")
        if message not in out:
            raise Fail(f"错误说明里没有工具给的原因「{message}」：{out[:80]!r}")


def check_html_header(fn: Callable) -> None:
    out = _call(fn, SALES_PAGE)
    rows = table_rows(out)
    if not rows:
        raise Fail(f"输出里没有以 | 开头的 Markdown 表格行：{out[:80]!r}")
    if rows[0] != ["类别", "销售额", "备注"]:
        raise Fail(f"表头应为 ['类别', '销售额', '备注']，得到 {rows[0]}")
    if not _separator_after_header(out):
        raise Fail("表头下一行应是分隔行，例如 | --- | --- | --- |")


def check_html_rows(fn: Callable) -> None:
    rows = table_rows(_call(fn, SALES_PAGE))
    want = [["显示器", "4495", "最高"], ["键盘", "2985", "含 | 竖线"], ["鼠标", "2212", ""]]
    if rows[1:] != want:
        raise Fail(f"数据行应为 {want}，得到 {rows[1:]}")


def check_html_random(fn: Callable) -> None:
    from hypothesis import HealthCheck, given, settings, strategies as st
    from hypothesis.reporting import with_reporter

    cell = st.text(alphabet=st.sampled_from(list("显示器键盘鼠标abcXYZ0123456789 |<>&")), max_size=8).map(
        lambda s: " ".join(s.split()))

    @settings(max_examples=60, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(cell, min_size=n, max_size=n),
                                                           min_size=1, max_size=5)))
    def prop(rows: list[list[str]]) -> None:
        out = _call(fn, _html_table(rows), 4000)
        got = table_rows(out)
        if got != rows:
            raise Fail(f"表格 {rows} 转换后读回来是 {got}（输出 {out[:100]!r}）")

    with with_reporter(lambda _msg: None):
        prop()


def check_json(fn: Callable) -> None:
    for raw in ({"城市": "上海", "降水量": 0, "有预警": False, "预警": None}, ["晴", "多云"], 0, False):
        out = _call(fn, raw)
        try:
            back = json.loads(out)
        except ValueError:
            raise Fail(f"{raw!r} 应变成 JSON 文本，得到 {out[:80]!r}（不是合法 JSON，例如 Python 的 repr）") from None
        if back != raw or type(back) is not type(raw):
            raise Fail(f"{raw!r} 转成 JSON 后内容变了：{out[:80]!r}")
        if "上海" in str(raw) and "上海" not in out:
            raise Fail("中文被转义成了 \\uXXXX：json.dumps 要加 ensure_ascii=False")


def check_plain_text(fn: Callable) -> None:
    text = "搜索结果：Python MCP 相关内容 3 条"
    out = _call(fn, text)
    if out != text:
        raise Fail(f"不超预算的普通文本应原样返回，得到 {out[:80]!r}")


def check_budget(fn: Callable) -> None:
    rng = random.Random(1)
    for n in range(30):
        size = rng.choice([50, 300, 2000, 20000])
        max_chars = rng.choice([60, 200, 1000])
        kind = n % 4
        if kind == 0:
            raw: Any = "第一行\n" + "数据" * size
        elif kind == 1:
            raw = {f"字段{i}": "值" * 5 for i in range(size // 10)}
        elif kind == 2:
            raw = [{"id": i, "name": f"商品{i}"} for i in range(size // 10)]
        else:
            raw = _html_table([["a", "b"]] + [[f"{i}", "值" * 5] for i in range(size // 20)])
        out = _call(fn, raw, max_chars)
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时输出有 {len(out)} 个字符（输入类型 {type(raw).__name__}）")


EXERCISE = Exercise("01", "01_parse_tool_result", "解析工具结果：错误判断与 HTML 表格转 Markdown", "parse_tool_output", (
    Check("error_none_is_success", "{'error': None} 是成功，不是失败（原课程用了 'error' in result）",
          "看 error 的值，不是看有没有这个键：error 为 None / 空时是成功", check_error_none),
    Check("error_envelope_reported", "工具报告的错误变成一句「❌ 工具执行失败: 原因」",
          "error 是 dict 时取它的 message；是字符串时直接用", check_error_reported),
    Check("html_table_header", "HTML 表格的表头和分隔行", "第一个 <tr> 的单元格是表头，下一行写 | --- | --- |",
          check_html_header),
    Check("html_table_rows", "HTML 表格的数据行（去掉 <b> 等标签，| 转义为 \\|）",
          "每个 <tr> 一行；单元格里的标签去掉、html.unescape、竖线写成 \\|", check_html_rows),
    Check("html_table_random", "随机生成的 60 张表格都能原样读回（hypothesis）",
          "注意空单元格、&lt; 之类的转义字符和 | 竖线", check_html_random),
    Check("json_keeps_values", "dict / list / 0 / False 变成合法 JSON，中文可读，0 和 False 不丢",
          "用 json.dumps(raw, ensure_ascii=False)，不要用 str()", check_json),
    Check("plain_text_unchanged", "不超预算的普通文本原样返回", "字符串且不含 <table> 时直接返回", check_plain_text),
    Check("within_budget", "任何输入的输出都不超过 max_chars", "最后统一检查长度，超出时截断并注明（注明的文字也算在内）",
          check_budget),
))
