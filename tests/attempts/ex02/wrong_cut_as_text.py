"""The chapter's text cut applied to a JSON array: head + tail of the text, the JSON broken, records cut in half.

fails: valid_json | 不是合法的 JSON
fails: whole_items | 不是合法的 JSON
fails: exact_note | 不是合法的 JSON
fails: fills_budget | 不是合法的 JSON
fails: random_arrays | 不是合法的 JSON
"""
from toolkit import smart_truncate


def truncate_json_rows(text, max_chars):
    if len(text) <= max_chars:
        return text
    room = max(max_chars - 40, 0)
    return smart_truncate(text, max_chars, keep_head=room * 2 // 3, keep_tail=room // 3)
