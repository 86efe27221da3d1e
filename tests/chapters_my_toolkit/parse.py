# 我的工具包：parse（接在 ToolExecutor(parse=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

import json

RETRYABLE = (TimeoutError, ConnectionError)

def parse_tool_result(result, max_chars=2000):
    """把工具的原始返回值变成交给模型的文字，不超过 max_chars 个字符。"""
    if isinstance(result, BaseException):
        retry = "可重试" if isinstance(result, RETRYABLE) else "不可重试"
        return fit_text(f"✘ 工具执行失败（{retry}）: {type(result).__name__}: {result}", max_chars)
    if isinstance(result, dict):
        error = result.get("error")
        if error not in (None, "", {}, []) and result.get("status") not in ("ok", "success"):
            message = error.get("message", error) if isinstance(error, dict) else error
            retry = "可重试" if result.get("retryable") is True else "不可重试"
            return fit_text(f"✘ 工具执行失败（{retry}）: {message}", max_chars)
    if isinstance(result, str):
        return fit_text(result, max_chars)
    return fit_json(result, max_chars)

def fit_text(text, max_chars):
    """放得下原样返回；放不下留开头和结尾，中间注明省略了多少字符。"""
    if len(text) <= max_chars:
        return text
    keep = max(max_chars - len(f"\n…（已省略 {len(text)} 字符）…\n"), 0)
    head, tail = text[:keep // 2], text[len(text) - (keep - keep // 2):]
    return f"{head}\n…（已省略 {len(text) - len(head) - len(tail)} 字符）…\n{tail}"[:max_chars]

def fit_json(value, max_chars):
    """转成 JSON；放不下时 list 只留前几项、dict 只留前几个字段，并注明一共多少项：仍是合法 JSON。"""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= max_chars or not isinstance(value, (list, dict)):
        return text
    items = list(value.items()) if isinstance(value, dict) else value
    kept = []
    for item in items:
        if len(shrunk(value, kept + [item])) > max_chars:
            break
        kept.append(item)
    return shrunk(value, kept)

def shrunk(value, kept):
    """只含 kept 这几项的 JSON，最后一项说明还有多少没显示。"""
    note = f"还有 {len(value) - len(kept)} 项未显示（共 {len(value)} 项）"
    data = {**dict(kept), "…": note} if isinstance(value, dict) else [*kept, note]
    return json.dumps(data, ensure_ascii=False, default=str)


def parse_as_data(raw, max_chars):
    """课堂版写出的 JSON 文本读回成 list / dict 再交给执行器：tool 消息里只序列化一次。"""
    text = parse_tool_result(raw, max_chars)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


PIECE = parse_as_data
