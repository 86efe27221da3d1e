"""Cuts the whole Markdown text at max_chars (the original course's cut): the last row is cut in half and
the model is not told how many rows there were.

fails: whole_rows | 整行
fails: count_said | 仅显示前 k 行，共 n 行
"""
import html as html_lib
import re


def rows_of(page):
    table = re.search(r"<table.*?</table>", page, re.S | re.I)
    if table is None:
        return []
    return [[cell_text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S | re.I)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), re.S | re.I)]


def cell_text(fragment):
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))
    return " ".join(text.split()).replace("|", "\\|")


def lines_of(rows):
    header, *body = rows
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)] + ["| " + " | ".join(r) + " |" for r in body]


def html_table_to_markdown(page, max_chars=2000):
    rows = rows_of(page)
    if not rows:
        return "（页面里没有表格）"
    text = "\n".join(lines_of(rows))
    if len(text) <= max_chars:
        return text
    note = "\n（已截断）"
    return text[:max_chars - len(note)] + note
