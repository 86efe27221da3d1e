"""The original course's smart_truncate: strip() after cutting, a count that ignores it, a tail cut mid-line.

fails: omitted_count_exact | 标记说省略了
fails: line_boundaries | 一行的中间
fails: long_last_line | 从一行的开头开始
fails: random_texts | 行边界
"""


def truncate_head_tail(text, max_chars):
    if len(text) <= max_chars:
        return text
    keep_head, keep_tail = max_chars // 2 - 20, max_chars // 2 - 20
    head_end = keep_head
    nl_pos = text.rfind('\n', 0, keep_head)
    if nl_pos > keep_head * 0.5:
        head_end = nl_pos
    head = text[:head_end].strip()
    tail = text[-keep_tail:].strip()
    omitted = len(text) - head_end - keep_tail
    return f"{head}\n…（已省略 {omitted} 字符）…\n{tail}"
