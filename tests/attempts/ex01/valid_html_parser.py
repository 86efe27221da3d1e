"""Reads the table with the standard library's HTMLParser instead of regular expressions."""
import json
from html.parser import HTMLParser


class TableReader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.cell, self.in_table, self.done = [], None, False, False

    def handle_starttag(self, tag, attrs):
        if tag == "table" and not self.done:
            self.in_table = True
        elif self.in_table and tag == "tr":
            self.rows.append([])
        elif self.in_table and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()).replace("|", "\\|"))
            self.cell = None
        elif tag == "table" and self.in_table:
            self.in_table, self.done = False, True

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def to_markdown(page):
    reader = TableReader()
    reader.feed(page)
    header, *body = reader.rows
    return "\n".join(["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * len(header)) + " |"]
                     + ["| " + " | ".join(row) + " |" for row in body])


def parse_tool_output(raw, max_chars=2000):
    if isinstance(raw, dict) and (raw.get("status") == "error" or raw.get("error") not in (None, "", {}, [])):
        error = raw.get("error")
        text = "❌ 工具执行失败: " + str(error.get("message", error) if isinstance(error, dict) else error)
    elif isinstance(raw, str):
        text = to_markdown(raw) if "<table" in raw.lower() else raw
    else:
        text = json.dumps(raw, ensure_ascii=False, default=str)
    if len(text) > max_chars:
        note = "…（已截断）"
        text = (text[: max_chars - len(note)] + note) if max_chars > len(note) else text[:max_chars]
    return text
