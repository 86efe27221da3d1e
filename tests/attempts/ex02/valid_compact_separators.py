"""A valid answer: compact separators (",", ":") fit more items than json.dumps' defaults; the note is built
once per try with str.format."""
import json

from toolkit import smart_truncate

NOTE = "共 {} 项，显示前 {} 项"


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    try:
        items = json.loads(text)
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list):
        return smart_truncate(text, max_chars, keep_head=(max_chars - 40) // 2, keep_tail=(max_chars - 40) // 2)
    kept = []
    for item in items:
        trial = json.dumps(kept + [item, NOTE.format(len(items), len(kept) + 1)], ensure_ascii=False,
                           separators=(",", ":"))
        if len(trial) > max_chars:
            break
        kept.append(item)
    return json.dumps(kept + [NOTE.format(len(items), len(kept))], ensure_ascii=False, separators=(",", ":"))
