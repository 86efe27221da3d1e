"""Deletes the old results' user messages instead of replacing their content: the calls lose their results.

fails: pairs_intact | 消息条数变了
fails: within_budget | 工具结果从
fails: stops_at_budget | 工具结果从
fails: keeps_last | 工具结果从
fails: exempt_kept | 工具结果从
fails: oldest_first | 工具结果从
fails: says_how_back | 工具结果从
fails: random_histories | 消息条数变了
"""
import copy
import json


def clear_anthropic(messages, budget_chars, keep_last=3, exempt=()):
    """Anthropic 格式：把最旧的 tool_result 块换成占位文字，直到总字符数不超过 budget_chars。
    最后 keep_last 个块、exempt 里的工具的结果永远保留；不改动传进来的列表。"""
    out = copy.deepcopy(messages)
    calls = {}  # tool_use id -> (工具名, 参数)：tool_result 块里没有工具名，要到前面的 tool_use 块里查
    for m in out:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for block in m["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls[block["id"]] = (block["name"], json.dumps(block.get("input", {}), ensure_ascii=False))
    blocks = [b for m in out if m.get("role") == "user" and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]

    def size(block):
        content = block.get("content", "")
        return len(content) if isinstance(content, str) else len(json.dumps(content, ensure_ascii=False))

    total = sum(size(b) for b in blocks)
    protected = {id(b) for b in blocks[max(len(blocks) - keep_last, 0):]} if keep_last else set()
    for block in blocks:  # 从最旧的开始
        if total <= budget_chars:
            break
        name, arguments = calls.get(block["tool_use_id"], ("未知工具", ""))
        if id(block) in protected or name in exempt:
            continue
        content = block.get("content", "")
        try:
            handle = json.loads(content).get("more", {}).get("result_id") if isinstance(content, str) else None
        except (ValueError, AttributeError):
            handle = None
        back = f"调用 read_more(result_id={handle}) 取回" if handle else f"用同样的参数再调用一次 {name}（{arguments}）"
        text = f"[已清除] {name} 的结果（{size(block)} 字符）；需要时{back}"
        if len(text) < size(block):
            total += len(text) - size(block)
            block["content"] = None  # 标记删除
    return [m for m in out if not (m.get("role") == "user" and isinstance(m.get("content"), list)
                                   and any(isinstance(b, dict) and b.get("content") is None for b in m["content"]))]
