"""The note in shrink_json's words ("…还有 N 项未显示（共 M 项）"), not the asked 「共 N 项，显示前 M 项」.

fails: exact_note | 共 120 项，显示前
fails: random_arrays | 说明应是
"""
import json

from toolkit import smart_truncate


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list):
        room = max(max_chars - 40, 0)
        return smart_truncate(text, max_chars, keep_head=room * 2 // 3, keep_tail=room // 3)
    total, kept = len(items), []
    for item in items:
        note = f"…还有 {total - len(kept) - 1} 项未显示（共 {total} 项）"
        if len(json.dumps(kept + [item, note], ensure_ascii=False)) > max_chars:
            break
        kept.append(item)
    return json.dumps(kept + [f"…还有 {total - len(kept)} 项未显示（共 {total} 项）"], ensure_ascii=False)
