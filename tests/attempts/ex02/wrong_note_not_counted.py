"""Fills the budget with items first and appends the note afterwards: the note is not counted in the budget.

fails: within_budget | 说明文字也算在预算里
fails: random_arrays | 长度
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
        if len(json.dumps(kept + [item], ensure_ascii=False)) > max_chars:
            break
        kept.append(item)
    return json.dumps(kept + [f"共 {len(items)} 项，显示前 {len(kept)} 项"], ensure_ascii=False)
