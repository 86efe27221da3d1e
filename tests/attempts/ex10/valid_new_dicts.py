"""Decides first which blocks to clear, then builds new messages and blocks (no deepcopy): the input is never touched."""
import json


def clear_anthropic(messages, budget_chars, keep_last=3, exempt=()):
    names = {b["id"]: (b["name"], json.dumps(b.get("input", {}), ensure_ascii=False))
             for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), list)
             for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
    found = [(i, j) for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)
             for j, b in enumerate(m["content"]) if isinstance(b, dict) and b.get("type") == "tool_result"]
    sizes = {key: len(str(messages[key[0]]["content"][key[1]]["content"])) for key in found}
    keep = set(found[len(found) - keep_last:]) if keep_last else set()
    total, new_text = sum(sizes.values()), {}
    for key in found:
        if total <= budget_chars:
            break
        block = messages[key[0]]["content"][key[1]]
        name, arguments = names.get(block["tool_use_id"], ("?", ""))
        if key in keep or name in exempt:
            continue
        handle = None
        if str(block["content"]).startswith("{"):
            handle = json.loads(block["content"]).get("more", {}).get("result_id")
        how = f"read_more(result_id={handle})" if handle else f"再调用一次 {name}，参数 {arguments}"
        text = f"（{name} 的旧结果已清除，原 {sizes[key]} 字符；要用时：{how}）"
        if len(text) < sizes[key]:
            new_text[key] = text
            total += len(text) - sizes[key]
    out = []
    for i, m in enumerate(messages):
        if any(k[0] == i for k in new_text):
            m = {**m, "content": [{**b, "content": new_text[(i, j)]} if (i, j) in new_text else b
                                  for j, b in enumerate(m["content"])]}
        out.append(m)
    return out
