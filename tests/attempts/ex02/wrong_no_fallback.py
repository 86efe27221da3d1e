"""Assumes every long output is a JSON array: json.loads raises JSONDecodeError on a plain report, and a JSON object
or string is not a list.

fails: text_falls_back | JSONDecodeError
"""
import json


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    items = json.loads(text)
    total, kept = len(items), []
    for item in items:
        if len(json.dumps(kept + [item, f"共 {total} 项，显示前 {len(kept) + 1} 项"], ensure_ascii=False)) > max_chars:
            break
        kept.append(item)
    return json.dumps(kept + [f"共 {total} 项，显示前 {len(kept)} 项"], ensure_ascii=False)
