"""A text fallback whose tail starts at find(...) + 1: with no newline in the tail, find gives -1 and the
"tail" is the whole text, clipped to the budget: the ending is gone.

fails: text_falls_back | 要保留结尾
"""
import json



def note_for(head, tail, total):
    return f"（省略了第 {head + 1} 到第 {total - tail} 项，共 {total} 项）"


def cut_text(text, max_chars):
    room = max_chars - 20
    head = text[:room * 2 // 3]
    start = text.find("\n", len(text) - room // 3)   # -1 when there is no newline in the tail
    tail = text[start + 1:]                           # ... then the "tail" is the whole text
    return (head + "\n…（省略）…\n" + tail)[:max_chars]


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
