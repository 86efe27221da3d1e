"""Reads the table with the standard library's HTMLParser, reserves room for the note up front (its numbers
at their widest) and says it in other words: "表格共 n 行，这里只显示前 k 行"."""
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


def html_table_to_markdown(page, max_chars=2000):
    reader = TableReader()
    reader.feed(page)
    if not reader.rows:
        return "（页面里没有表格）"
    header, *body = reader.rows
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * len(header)) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    if len("\n".join(lines)) <= max_chars:
        return "\n".join(lines)
    widest = f"（表格共 {len(body)} 行，这里只显示前 {len(body)} 行）"
    room = max_chars - len(widest) - 1
    used, shown = len(lines[0]) + 1 + len(lines[1]), 0
    for line in lines[2:]:
        if used + 1 + len(line) > room:
            break
        used += 1 + len(line)
        shown += 1
    return "\n".join(lines[:2 + shown] + [f"（表格共 {len(body)} 行，这里只显示前 {shown} 行）"])
