"""Works out first how many characters must go (the excess over the budget), then walks the blocks oldest first,
in an index loop, and stops once the savings cover it; within the budget it returns a copy at once."""
import copy
import json


def clear_anthropic(messages, budget_chars, keep_last=3, exempt=()):
    out = copy.deepcopy(messages)
    tool_names = {}
    for message in out:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    tool_names[block["id"]] = (block["name"], block.get("input", {}))
    places = []
    for i, message in enumerate(out):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            places += [(i, j) for j, block in enumerate(message["content"]) if block.get("type") == "tool_result"]
    excess = sum(len(out[i]["content"][j]["content"]) for i, j in places) - budget_chars
    if excess <= 0:
        return out
    saved = 0
    for n in range(max(len(places) - keep_last, 0)):
        if saved >= excess:
            break
        i, j = places[n]
        block = out[i]["content"][j]
        name, given = tool_names.get(block["tool_use_id"], ("?", {}))
        if name in exempt:
            continue
        old = block["content"]
        try:
            result_id = json.loads(old)["more"]["result_id"]
        except (ValueError, KeyError, TypeError):
            result_id = None
        if result_id is not None:
            how = f"read_more(result_id={result_id})"
        else:
            how = f"{name}({json.dumps(given, ensure_ascii=False)})"
        new = f"[{name} 的结果已清除，{len(old)} 字符] 取回：{how}"
        if len(new) < len(old):
            block["content"] = new
            saved += len(old) - len(new)
    return out
