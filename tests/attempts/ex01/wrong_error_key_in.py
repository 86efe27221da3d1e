"""The original course's test `'error' in raw`: {"error": None} is reported as a failure; lists become str().

fails: error_none_is_success | 被当成了失败
fails: json_keeps_values | 不是合法 JSON
"""
import html
import re


def parse_tool_output(raw, max_chars=2000):
    if isinstance(raw, dict) and ("error" in raw or raw.get("status") == "error"):
        error = raw.get("error")
        text = f"❌ 工具执行失败: {error.get('message', error) if isinstance(error, dict) else error}"
    elif isinstance(raw, str) and "<table" in raw:
        rows = []
        for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", raw, re.S):
            cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)
            rows.append([" ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).split()).replace("|", "\\|") for c in cells])
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        text = "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])
    elif isinstance(raw, str):
        text = raw
    else:
        text = str(raw)
    return text if len(text) <= max_chars else text[:max_chars - 6] + "…（已截断）"[:6]
