"""Chapter 01's fit_json with the note reworded: it keeps the first items only, so the end of the array
(the latest records, a total) is lost, and the budget left over is never given to the tail.

fails: head_and_tail | 只留了开头
fails: fills_budget | 一项不跳
fails: random_arrays | 还放得下一项
"""
import json


def truncate_json_rows(text, max_chars):
    """Chapter 01's fit_json on the parsed array, with the note reworded: only the head is kept."""
    if len(text) <= max_chars:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list):
        keep = max(max_chars - 20, 0)
        return text[:keep // 2] + "\n…（已省略）…\n" + text[len(text) - (keep - keep // 2):]
    kept = []
    for item in value:
        if len(shrunk(value, kept + [item])) > max_chars:
            break
        kept.append(item)
    return shrunk(value, kept)


def shrunk(value, kept):
    note = f"（省略了第 {len(kept) + 1} 到第 {len(value)} 项，共 {len(value)} 项）"
    return json.dumps([*kept, note], ensure_ascii=False)
