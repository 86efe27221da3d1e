"""Strips each cell but does not collapse the whitespace inside it: a cell broken over two lines in the HTML
breaks its Markdown row in two.

fails: html_table_rows | 合并成一个空格
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
    return text.strip().replace("|", "\\|")


def lines_of(rows):
    header, *body = rows
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)] + ["| " + " | ".join(r) + " |" for r in body]


def html_table_to_markdown(page, max_chars=2000):
    rows = rows_of(page)
    if not rows:
        return "（页面里没有表格）"
    lines = lines_of(rows)
    if len("\n".join(lines)) <= max_chars:
        return "\n".join(lines)
    kept = lines[:2]
    for line in lines[2:]:
        if len("\n".join([*kept, line, f"（仅显示前 {len(kept)} 行，共 {len(rows)} 行）"])) > max_chars:
            break
        kept.append(line)
    return "\n".join([*kept, f"（仅显示前 {len(kept) - 2} 行，共 {len(rows) - 1} 行）"])
