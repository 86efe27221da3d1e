"""Cuts the text after the last "}" that fits and closes the bracket: with a nested object ("customer": {...}) the
last "}" may close the inner one, and the JSON is broken.

fails: valid_json | 不是合法的 JSON
fails: whole_items | 不是合法的 JSON
fails: exact_note | 不是合法的 JSON
fails: fills_budget | 不是合法的 JSON
fails: random_arrays | 只保留了
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
    end = text.rfind("}", 0, max_chars - 30)
    head = text[:end + 1] if end > 0 else "["
    kept = head.count("{")  # a count of the records the cut kept
    note = json.dumps(f"共 {len(items)} 项，显示前 {kept} 项", ensure_ascii=False)
    return head + (", " if end > 0 else "") + note + "]"
