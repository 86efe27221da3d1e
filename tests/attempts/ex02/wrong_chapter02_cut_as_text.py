"""Chapter 02's smart_truncate on everything: head and tail as text, so the array is cut in the middle of an
item and is no longer JSON.

fails: valid_json | 不是合法的 JSON
fails: head_and_tail | 不是合法的 JSON
fails: exact_note | 不是合法的 JSON
fails: chinese_unescaped | 不是合法的 JSON
fails: fills_budget | 不是合法的 JSON
fails: random_arrays | 不是合法的 JSON
"""
from toolkit import smart_truncate


def truncate_json_rows(text, max_chars):
    """Chapter 02's cut for everything: head and tail as text, so an array is cut in the middle of an item."""
    if len(text) <= max_chars:
        return text
    room = max(max_chars - 40, 0)
    return smart_truncate(text, max_chars, keep_head=room * 2 // 3, keep_tail=room // 3)
