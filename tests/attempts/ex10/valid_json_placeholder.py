"""The placeholder is itself JSON the model can read field by field: what was there and how to get it back."""
import copy
import json


def clear_anthropic(messages, budget_chars, keep_last=3, exempt=()):
    out = copy.deepcopy(messages)
    uses = {}
    for m in out:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                uses[b["id"]] = b
    blocks = [b for m in out if m.get("role") == "user" and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    total = sum(len(b["content"]) for b in blocks)
    for n, block in enumerate(blocks):
        if total <= budget_chars:
            break
        use = uses.get(block["tool_use_id"], {"name": "?", "input": {}})
        if n >= len(blocks) - keep_last or use["name"] in exempt:
            continue
        try:
            handle = json.loads(block["content"]).get("more", {}).get("result_id")
        except ValueError:
            handle = None
        how = f"read_more(result_id={handle})" if handle else {"tool": use["name"], "input": use["input"]}
        text = json.dumps({"cleared": True, "tool": use["name"], "chars": len(block["content"]),
                           "how_to_get_back": how}, ensure_ascii=False)
        if len(text) < len(block["content"]):
            total += len(text) - len(block["content"])
            block["content"] = text
    return out
