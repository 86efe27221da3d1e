"""A valid answer whose text fallback is written by hand: at a newline near each cut when there is one, else
in the middle of the line (a line without newlines keeps its ending too).
"""
import json



def note_for(head, tail, total):
    return f"（省略了第 {head + 1} 到第 {total - tail} 项，共 {total} 项）"


def cut_text(text, max_chars):
    """Head and tail by hand: at a newline when there is one near the cut, else in the middle of the line."""
    room = max(max_chars - 30, 0)
    keep_head, keep_tail = room * 2 // 3, room // 3
    head_end = text.rfind("\n", 0, keep_head + 1)
    if head_end <= 0:
        head_end = keep_head
    start = len(text) - keep_tail
    newline = text.find("\n", start, len(text) - keep_tail // 2)
    tail_start = newline + 1 if newline != -1 else start
    return text[:head_end] + f"\n…（已省略 {tail_start - head_end} 字符）…\n" + text[tail_start:]


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    try:
        items = json.loads(text)
    except ValueError:
        return cut_text(text, max_chars)
    if not isinstance(items, list):
        return cut_text(text, max_chars)
    whole = json.dumps(items, ensure_ascii=False)
    if len(whole) <= max_chars:
        return whole
    total = len(items)
    head = tail = 0
    turn_head = True
    while head + tail < total - 1:
        grown = False
        for at_head in (turn_head, not turn_head):
            h, t = (head + 1, tail) if at_head else (head, tail + 1)
            trial = json.dumps(items[:h] + [note_for(h, t, total)] + items[total - t:], ensure_ascii=False)
            if len(trial) <= max_chars:
                head, tail, grown, turn_head = h, t, True, not at_head
                break
        if not grown:
            break
    return json.dumps(items[:head] + [note_for(head, tail, total)] + items[total - tail:], ensure_ascii=False)
