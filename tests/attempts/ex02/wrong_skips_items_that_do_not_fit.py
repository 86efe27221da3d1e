"""Keeps every item that still fits, skipping the big ones: the kept items are no longer the array's head and
tail, and the note's range is not true.

fails: head_and_tail | 只留了开头
fails: exact_note | 一项不跳
fails: fills_budget | 一项不跳
fails: random_arrays | 一项不跳
"""
import json

from toolkit import smart_truncate


def truncate_json_rows(text, max_chars):
    """Keeps every item that still fits, skipping the big ones: the array is no longer its head and its tail."""
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
        note = f"（省略了第 {len(kept) + 2} 到第 {len(items)} 项，共 {len(items)} 项）"
        if len(json.dumps(kept + [item, note], ensure_ascii=False)) <= max_chars:
            kept.append(item)
    return json.dumps(kept + [f"（省略了第 {len(kept) + 1} 到第 {len(items)} 项，共 {len(items)} 项）"], ensure_ascii=False)
