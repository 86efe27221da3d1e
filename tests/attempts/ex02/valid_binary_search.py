"""A valid answer: binary search on how many items fit, measuring the whole output each time; the fallback
cuts text at line boundaries itself (the chapter's way) instead of calling smart_truncate."""
import json


def _output(items, m):
    return json.dumps(items[:m] + [f"共 {len(items)} 项，显示前 {m} 项"], ensure_ascii=False)


def _text_cut(text, max_chars):
    room = max(max_chars - 30, 0)
    keep_head, keep_tail = room * 2 // 3, room // 3
    head_end = text.rfind("\n", 0, keep_head + 1)
    if head_end == -1:
        head_end = keep_head
    tail_start = text.find("\n", len(text) - keep_tail - 1) + 1
    if tail_start == 0:
        tail_start = len(text)
    return text[:head_end] + f"\n…（已省略 {tail_start - head_end} 字符）…\n" + text[tail_start:]


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    try:
        items = json.loads(text)
    except ValueError:
        return _text_cut(text, max_chars)
    if type(items) is not list:
        return _text_cut(text, max_chars)
    low, high = 0, len(items)  # _output(items, low) fits (assumed: max_chars >= 40)
    while low < high:
        mid = (low + high + 1) // 2
        if len(_output(items, mid)) <= max_chars:
            low = mid
        else:
            high = mid - 1
    return _output(items, low)
