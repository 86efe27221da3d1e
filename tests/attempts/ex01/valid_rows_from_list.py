"""Splits the table with str.split on the tags instead of one regular expression per level, and fits the
rows by dropping them from the end until the text and its note fit."""
import html
import re


def html_table_to_markdown(page, max_chars=2000):
    lower = page.lower()
    start = lower.find("<table")
    if start < 0:
        return "（页面里没有表格）"
    table = page[start:lower.find("</table>", start)]
    rows = []
    for tr in re.split(r"<tr\b[^>]*>", table, flags=re.I)[1:]:
        cells = re.split(r"<t[hd]\b[^>]*>", tr.split("</tr>")[0], flags=re.I)[1:]
        texts = [" ".join(html.unescape(re.sub(r"<[^>]*>", "", c)).split()).replace("|", r"\|") for c in cells]
        rows.append(texts)
    if not rows:
        return "（页面里没有表格）"
    header, body = rows[0], rows[1:]
    make = lambda r: "| " + " | ".join(r) + " |"
    head = [make(header), "|" + "---|" * len(header)]
    shown = len(body)
    text = "\n".join(head + [make(r) for r in body])
    while len(text) > max_chars and shown > 0:
        shown -= 1
        text = "\n".join(head + [make(r) for r in body[:shown]] + [f"（仅显示前 {shown} 行，共 {len(body)} 行）"])
    return text
