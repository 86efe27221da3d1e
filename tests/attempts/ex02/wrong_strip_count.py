"""Strips the head and the tail after cutting and counts the omitted characters before stripping.

fails: omitted_count_exact | 省略
fails: random_texts | 省略数
"""


def truncate_head_tail(text, max_chars):
    if len(text) <= max_chars:
        return text
    budget = max(max_chars - len(f"\n…（已省略 {len(text)} 字符）…\n"), 0)
    head_end = max(text.rfind("\n", 0, budget // 2 + 1), 0)
    found = text.find("\n", len(text) - (budget - head_end) - 1)
    tail_start = len(text) if found == -1 else found + 1
    omitted = tail_start - head_end
    return f"{text[:head_end].strip()}\n…（已省略 {omitted} 字符）…\n{text[tail_start:].strip()}"
