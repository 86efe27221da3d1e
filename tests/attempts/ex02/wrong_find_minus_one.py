"""The tail starts after text.find("\n", start) + 1 without handling -1: with a last line longer than the
tail's budget, find returns -1, the tail becomes the whole text and the omitted count goes negative
(the original course code's bug).

fails: long_last_line | 返回 -1
fails: random_texts | 长度
"""


def truncate_head_tail(text, max_chars):
    if len(text) <= max_chars:
        return text
    budget = max_chars - len(f"\n…（已省略 {len(text)} 字符）…\n")
    head_end = max(text.rfind("\n", 0, budget // 2 + 1), 0)
    tail_start = text.find("\n", len(text) - (budget - head_end) - 1) + 1
    omitted = tail_start - head_end
    return f"{text[:head_end]}\n…（已省略 {omitted} 字符）…\n{text[tail_start:]}"
