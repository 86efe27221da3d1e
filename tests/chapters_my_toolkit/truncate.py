# 我的工具包：truncate（接在 ToolExecutor(truncate=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def smart_truncate(text, max_chars=8000, keep_head=None, keep_tail=None):
    """保留开头和结尾，在行边界下刀，中间一行标记写明准确的省略字符数。

    没给 keep_head、keep_tail 时：先给标记留 40 个字符，剩下的 2/3 给开头、1/3 给结尾，结果不超过 max_chars。
    keep_head + keep_tail > max_chars（或有负数）时抛出 ValueError，并说明怎么改。
    """
    if keep_head is None or keep_tail is None:
        room = max(max_chars - 40, 0)  # 给标记留 40 个字符，和执行器一样
        keep_head, keep_tail = room * 2 // 3, room // 3
    if keep_head < 0 or keep_tail < 0 or keep_head + keep_tail > max_chars:
        raise ValueError(f"keep_head + keep_tail（{keep_head} + {keep_tail}）不能超过 max_chars（{max_chars}），"
                         "也不能是负数：把 keep_head 或 keep_tail 调小，或者把 max_chars 调大")
    if len(text) <= max_chars:
        return text
    head_end = text.rfind("\n", 0, keep_head + 1)            # 开头：keep_head 以内最后一个换行符
    if head_end == -1:
        head_end = keep_head                                 # 第一行就太长：只好在行中间切
    tail_start = text.find("\n", len(text) - keep_tail - 1) + 1  # 结尾：从下一行的开头开始
    if tail_start == 0:
        tail_start = len(text)                               # 最后一行太长：结尾留空
    omitted = tail_start - head_end                          # 准确：头 + 省略 + 尾 = 原文
    return text[:head_end] + f"\n…（已省略 {omitted} 字符）…\n" + text[tail_start:]


PIECE = smart_truncate
