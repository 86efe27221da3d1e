"""Judges failure by the error's value only: {"status": "error", "error": None} passes as a success.

fails: status_error_is_failure | 即使 error 是空的，也是失败
"""
import html
import json
import re


def parse_tool_output(raw, max_chars=2000):
    if isinstance(raw, dict) and raw.get("error") not in (None, "", {}, []):
        error = raw["error"]
        text = f"❌ 工具执行失败: {error.get('message', error) if isinstance(error, dict) else error}"
    elif isinstance(raw, str) and "<table" in raw.lower():
        rows = []
        for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", raw, re.S | re.I):
            cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S | re.I)
            rows.append([" ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).split()).replace("|", "\\|") for c in cells])
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        text = "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])
    elif isinstance(raw, str):
        text = raw
    else:
        text = json.dumps(raw, ensure_ascii=False, default=str)
    note = "…（已截断）"
    return text if len(text) <= max_chars else text[:max(max_chars - len(note), 0)] + note[:max_chars]
