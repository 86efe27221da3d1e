"""Answer rendering: the offline model's Chinese answer from the tool results it was sent.

The status comes from the structured tool message (toolkit.readback), and each
tool's wording (field labels, a whole-answer renderer) from its ToolKnowledge;
only field names any tool might use are labelled here. The road's decision in a
message (offline.decision) changes how its result is used: a result the program
judged failed is not used, a broadened one is presented as reference only, and
the suggestion is quoted wherever it says what the data alone does not. A long
text is answered with its lines that the question asks about, not its head.
"""
from __future__ import annotations

import json
from typing import Any

from ...knowledge import knowledge_for
from ...readback import ToolReading, read_tool_content
from ...redaction import safe_str
from ...safety import detect_instructions
from .decision import Decision, decision_in, without_decision_line
from .planning import features
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


def _suggested(decision: Decision | None) -> str:
    """The decision's suggestion as quoted text ("" without one)."""
    return safe_str(decision.suggestion, 200).rstrip("。") if decision is not None and decision.suggestion else ""


def _render_error(tool: str, reading: ToolReading, decision: Decision | None = None) -> str:
    code = f"错误码 {safe_str(reading.error_code, 80)}" if reading.error_code else "没有错误码"
    message = safe_str(reading.error or "工具没有给出原因", 300)
    if _suggested(decision):
        hint = f"程序的建议：{_suggested(decision)}。"
    else:
        hint = "这是暂时性错误，可以稍后再试。" if reading.error_type == "retryable" else ""
    return (f"工具 {tool} 调用失败，分析没有完成（{code}：{message}）。{hint}"
            "没有拿到这部分数据，所以我不给出任何相关数字，也不猜测结果。")


def _not_used(tool: str, reading: ToolReading, decision: Decision | None) -> str | None:
    """What the model says of a result the decision tells it not to use (None: the result is used)."""
    if decision is None or reading.status == "error":
        return None
    said = _suggested(decision) or "没有给出建议"
    if decision.fails:
        return (f"工具 {tool} 返回了数据，但程序的决定是 {decision.action}（{said}）："
                "这一步的结果我不采用，所以不给出相关数字，也不猜测结果。")
    if decision.action == "retry_with_broader_query" and not _is_empty(reading.data):
        return (f"程序把工具 {tool} 的结果判为没有查到（{decision.action}：{said}），"
                "我没有采用这个结果，也不猜测。")
    return None


def _is_empty(data: Any) -> bool:
    return data is None or data in ("", [], {}) or (isinstance(data, str) and data.strip() in ("", "[]", "{}"))


_ASKING = ("多少", "几", "什么", "哪", "吗", "是否", "怎么", "如何", "为什么")
_CLAUSE_END = str.maketrans({c: "\n" for c in "，,。；;！!？?"})


def _asked_lines(text: str, question: str) -> list[str]:
    """The lines of a long `text` that share the most words with what `question` asks (its asking clause):
    what a reader quotes to answer it. [] when no line does, or the text is short enough to say whole."""
    if len(text) <= 120 or not question:
        return []
    clauses = [c for c in question.translate(_CLAUSE_END).split("\n") if c.strip()]
    wanted = features(" ".join([c for c in clauses if any(w in c for w in _ASKING)] or clauses[-1:]))
    lines = [line.strip() for line in text[:20000].replace("。", "\n").split("\n") if line.strip()]
    scores = [len(wanted & features(line)) for line in lines]
    best = max(scores, default=0)
    return [line for line, score in zip(lines, scores) if score == best][:3] if best else []


def _own_render(tool: str, data: Any) -> str | None:
    render = knowledge_for(tool).render
    if render is None:
        return None
    try:
        text = render(tool, data, say)
    except Exception:  # a tool's renderer that fails falls back to the labels
        return None
    return text if isinstance(text, str) and text else None


def render_reading(tool: str, reading: ToolReading, decision: Decision | None = None, question: str = "") -> str:
    """One result in words, used as `decision` (the road's, read from its message) says."""
    if reading.status == "error":
        return _render_error(tool, reading, decision)
    unused = _not_used(tool, reading, decision)
    if unused is not None:
        return unused
    words = _Words(tool)
    if reading.status == "partial":
        missing = safe_str(reading.missing or reading.error or "工具没有说明缺了什么", 200)
        return (f"工具 {tool} 只返回了部分结果。已拿到：{words.fields(reading.data)}。"
                f"缺失部分：{missing}。以上不是完整答案，缺失的部分我不猜测。")
    if decision is not None and decision.action == "present_broadened":
        return (f"工具 {tool} 的结果不是按原条件查到的（程序的说明：{_suggested(decision) or '条件被放宽过'}）。"
                f"仅供参考：{words.fields(reading.data)}。")
    asked = _asked_lines(reading.data, question) if isinstance(reading.data, str) else []
    text = _own_render(tool, reading.data) or (
        f"根据工具 {tool} 返回的内容：{'；'.join(say(line) for line in asked)}。" if asked
        else f"工具 {tool} 返回：{words.fields(reading.data)}。")
    if decision is not None and not decision.known:
        text += f"（程序的决定是 {decision.action}：{_suggested(decision) or '没有给出建议'}。）"
    return text


def answer_from_results(view: View) -> str:
    contents = [(call.get("name") or "（未知工具）", content) for call, content in view.results]
    readings = [(name, read_tool_content(without_decision_line(content)), decision_in(content))
                for name, content in contents]
    lines = [render_reading(safe_str(name, 80), reading, decision, view.question)
             for name, reading, decision in readings]
    last = readings[-1][2] if readings else None
    if last is not None and last.action == "call_more_tools":  # the program asked for more; no tool could do it
        lines.append(f"程序的决定是 call_more_tools（{_suggested(last) or '还要调用更多工具'}），"
                     "但提供的工具做不了这一步：以上只是已经完成的部分。")
    if all(reading.failed for _, reading, _ in readings):
        lines.insert(0, "分析失败：工具没有返回可用的数据。")
    elif all(reading.failed or _not_used("", reading, decision) for _, reading, decision in readings):
        lines.insert(0, "分析没有完成：按程序的决定，这次没有可以采用的工具结果。")
    found: list[str] = []
    for _, reading, _ in readings:
        _flagged([reading.data, reading.error, reading.missing], found)
    if found or any(reading.warnings for _, reading, _ in readings):
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
