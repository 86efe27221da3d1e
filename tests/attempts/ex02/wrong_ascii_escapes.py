"""json.dumps with its default ensure_ascii=True: every hanzi becomes a six-character \\uXXXX escape, so the model
reads escapes and the budget holds far fewer items.

fails: chinese_unescaped | ensure_ascii=False
fails: fills_budget | 预算放得下
fails: random_arrays | 放得下
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
        if len(json.dumps(kept + [item, f"共 {len(items)} 项，显示前 {len(kept) + 1} 项"])) > max_chars:
            break
        kept.append(item)
    return json.dumps(kept + [f"共 {len(items)} 项，显示前 {len(kept)} 项"])
