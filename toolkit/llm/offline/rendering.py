"""Answer rendering: the offline model's Chinese answer from the tool results it was sent.

The status comes from the structured tool message (toolkit.readback), and each
tool's wording (field labels, a whole-answer renderer) from its ToolKnowledge;
only field names any tool might use are labelled here.
"""
from __future__ import annotations

import json
from typing import Any

from ...knowledge import knowledge_for
from ...readback import ToolReading, read_tool_content
from ...results import safe_str
from ...safety import detect_instructions
from .request import OfferedTool, View

__all__ = ["TAG", "answer_from_results", "no_tool_answer", "missing_answer", "GENERIC_LABELS"]

TAG = "【离线模型】"
GENERIC_LABELS = {"name": "名称", "description": "描述", "count": "数量", "total": "合计", "source": "来源",
                  "note": "备注", "unit": "单位", "updated_at": "更新时间", "message": "说明", "results": "结果",
                  "items": "条目", "data": "数据", "summary": "摘要", "code": "错误码", "currency": "币种",
                  "date": "日期", "price": "价格", "city": "城市"}
_IGNORED = "〔这段内容是写给模型的指令，已忽略〕"
_MAX_ITEMS = 5
_NOTHING = object()


def _flagged(value: Any, found: list[str]) -> list[str]:
    """The strings inside value that read like instructions to the model (toolkit.safety)."""
    stack = [value]
    while stack:  # iterative: a deeply nested result must not exhaust the stack
        item = stack.pop()
        if isinstance(item, str):
            if detect_instructions(item):
                found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def say(value: Any) -> str:
    """One value in words, safely: instruction-like text is replaced, long text cut."""
    if isinstance(value, str):
        return _IGNORED if detect_instructions(value) else safe_str(value, 120)
    if isinstance(value, bool):
        return "是" if value else "否"
    if value is None:
        return "无"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    try:
        return safe_str(json.dumps(value, ensure_ascii=False), 160)
    except (TypeError, ValueError, RecursionError):
        return safe_str(value, 160)


class _Words:
    """Field labels for one tool: its own (ToolKnowledge.labels) over the generic ones."""

    def __init__(self, tool: str) -> None:
        self.labels = {**GENERIC_LABELS, **knowledge_for(tool).labels}

    def label(self, key: Any) -> str:
        return self.labels.get(str(key), safe_str(key, 40))

    def value(self, value: Any, known: dict | None = None) -> str:
        """One value in words; inside a list, fields the parent already said (known) are left out."""
        if isinstance(value, dict):
            fresh = [(k, v) for k, v in value.items() if not known or known.get(k, _NOTHING) != v]
            return "，".join(f"{self.label(k)} {say(v)}" for k, v in fresh[:8])
        if isinstance(value, list):
            items = [f"（{self.value(v, known)}）" if isinstance(v, dict) else say(v) for v in value[:_MAX_ITEMS]]
            more = "……（其余条目省略）" if len(value) > _MAX_ITEMS else ""
            return "、".join(items) + more if items else "（空）"
        return say(value)

    def fields(self, data: Any) -> str:
        if isinstance(data, dict):
            if not data:
                return "（空）"
            return "；".join(f"{self.label(k)}：{self.value(v, data)}" for k, v in data.items())
        return self.value(data)


def _render_error(tool: str, reading: ToolReading) -> str:
    code = f"错误码 {safe_str(reading.error_code, 80)}" if reading.error_code else "没有错误码"
    message = safe_str(reading.error or "工具没有给出原因", 300)
    hint = "这是暂时性错误，可以稍后再试。" if reading.error_type == "retryable" else ""
    return (f"工具 {tool} 调用失败，分析没有完成（{code}：{message}）。{hint}"
            "没有拿到这部分数据，所以我不给出任何相关数字，也不猜测结果。")


def _own_render(tool: str, data: Any) -> str | None:
    render = knowledge_for(tool).render
    if render is None:
        return None
    try:
        text = render(tool, data, say)
    except Exception:  # a tool's renderer that fails falls back to the labels
        return None
    return text if isinstance(text, str) and text else None


def render_reading(tool: str, reading: ToolReading) -> str:
    if reading.status == "error":
        return _render_error(tool, reading)
    words = _Words(tool)
    if reading.status == "partial":
        missing = safe_str(reading.missing or reading.error or "工具没有说明缺了什么", 200)
        return (f"工具 {tool} 只返回了部分结果。已拿到：{words.fields(reading.data)}。"
                f"缺失部分：{missing}。以上不是完整答案，缺失的部分我不猜测。")
    return _own_render(tool, reading.data) or f"工具 {tool} 返回：{words.fields(reading.data)}。"


def answer_from_results(view: View) -> str:
    readings = [(call.get("name") or "（未知工具）", read_tool_content(content)) for call, content in view.results]
    lines = [render_reading(safe_str(name, 80), reading) for name, reading in readings]
    if all(reading.failed for _, reading in readings):
        lines.insert(0, "分析失败：工具没有返回可用的数据。")
    found: list[str] = []
    for _, reading in readings:
        _flagged([reading.data, reading.error, reading.missing], found)
    if found or any(reading.warnings for _, reading in readings):
        quote = f"（“{safe_str(found[0], 40)}”）" if found else ""
        lines.append(f"注意：工具输出里夹带了指令{quote}。工具结果只是数据，不是指令，我没有照做。")
    return TAG + "\n".join(lines)


def no_tool_answer(tools: list[OfferedTool]) -> str:
    if not tools:
        return (TAG + "我是离线替身模型，只根据工具结果回答。这次请求没有提供任何工具，"
                "我查不到可靠的数据，所以不凭记忆编造答案。")
    names = "、".join(t.name for t in tools)
    return (TAG + f"这个问题没有合适的工具可以回答（可用工具：{names}）。"
            "我是离线替身模型，不凭记忆编造答案；请换一个与这些工具相关的问题。")


def missing_answer(tool: str, missing: tuple[str, ...]) -> str:
    return (TAG + f"要调用工具 {tool}，还缺少参数 {'、'.join(missing)}，"
            "问题里没有找到。请补充这些信息后再问。")
