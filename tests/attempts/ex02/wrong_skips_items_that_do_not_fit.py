"""Skips an item that does not fit and keeps looking for smaller ones further on: the kept items are no longer
the array's first ones, and "显示前 M 项" is not true.

fails: whole_items | 一项不跳
fails: random_arrays | 开头的那几项
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
    kept = []
    for item in items:
        if len(json.dumps(kept + [item, f"共 {len(items)} 项，显示前 {len(kept) + 1} 项"], ensure_ascii=False)) <= max_chars:
            kept.append(item)
    return json.dumps(kept + [f"共 {len(items)} 项，显示前 {len(kept)} 项"], ensure_ascii=False)
