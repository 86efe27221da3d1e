"""Keeps only the head (the original parse_tool_result's cut): the conclusion at the end is lost.

fails: keeps_tail | 结尾的「总计：9692」丢了
fails: random_texts | 最后一行
"""


def truncate_head_tail(text, max_chars):
    if len(text) <= max_chars:
        return text
    marker = f"\n…（已省略 {len(text)} 字符）…\n"
    head_end = max(text.rfind("\n", 0, max_chars - len(marker) + 1), 0)
    return f"{text[:head_end]}\n…（已省略 {len(text) - head_end} 字符）…\n"
