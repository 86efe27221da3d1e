"""Works on a list of lines: takes whole lines from the front and the back while they fit."""


def truncate_head_tail(text, max_chars):
    if len(text) <= max_chars:
        return text
    budget = max(max_chars - len(f"\n…（已省略 {len(text)} 字符）…\n"), 0)
    lines = text.split("\n")
    head, used = [], 0
    for line in lines[:-1]:
        cost = len(line) + (1 if head else 0)
        if used + cost > budget // 2:
            break
        head.append(line)
        used += cost
    head_text = "\n".join(head)
    tail, tail_used = [], 0
    for line in reversed(lines[len(head):]):
        cost = len(line) + (1 if tail else 0)
        if used + tail_used + cost > budget:
            break
        tail.insert(0, line)
        tail_used += cost
    tail_text = "\n".join(tail)
    if tail and len(tail) == len(lines) - len(head):  # everything would be kept: leave one line out
        tail_text = "\n".join(tail[1:])
    omitted = len(text) - len(head_text) - len(tail_text)
    return f"{head_text}\n…（已省略 {omitted} 字符）…\n{tail_text}"
