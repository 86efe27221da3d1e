"""The budget playground: a budget slider over a tool's output, and what the model would receive under it."""
from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from ..parsing import parse_tool_result
from ..shrink import dumps
from ..truncate import omission_marker, truncate_parts
from .base import MARKS, Panel

__all__ = ["BudgetPlayground", "head_and_tail", "WHOLE_UP_TO"]

WHOLE_UP_TO = 12_000  # characters: past this, a slider step would be too fine to drag to a whole text


def head_and_tail(text: str, budget: int) -> tuple[int, int]:
    """keep_head and keep_tail for smart_truncate so that head + marker + tail fit in `budget` characters.

    The marker counts: the longest it can be (for len(text) characters left out) comes off
    first, two thirds of the rest go to the head, one third to the tail.
    """
    room = max(budget - len(omission_marker(len(text))), 0)
    head = room * 2 // 3
    return head, room - head


class BudgetPlayground(Panel):
    """A budget slider over `value`: what smart_truncate (text) or parse_tool_result keep.

    `result` is the text the model would receive, never longer than the budget shown; the slider reaches
    4000 and, for a text of at most WHOLE_UP_TO characters, a budget that keeps all of it;
    `state` has method, budget, input and output lengths and whether anything was cut.
    Moving the slider recomputes at once. Raises ValueError for a method the value cannot use.
    """

    title = "预算游乐场"

    def __init__(self, value: Any, *, budget: int = 800, method: str | None = None, big: bool | None = None) -> None:
        super().__init__(big)
        self.value = value
        methods = [("parse_tool_result（max_tokens = 预算 ÷ 4）", "parse_tool_result")]
        if isinstance(value, str):
            methods.insert(0, ("smart_truncate（省略标记也算在预算里）", "smart_truncate"))
        method = method or methods[0][1]
        if method not in [m for _, m in methods]:
            raise ValueError(f"method must be one of {[m for _, m in methods]} for a {type(value).__name__}")
        self.input_text = value if isinstance(value, str) else dumps(value)
        # far enough right to keep a text of up to WHOLE_UP_TO characters whole: the slider shows a cut and no cut
        whole = -(-len(self.input_text) // 20) * 20
        top = max(4000, budget, whole if whole <= WHOLE_UP_TO else 0)
        self.budget = W.IntSlider(value=budget, min=40, max=top, step=20, description="预算（字符）")
        self.method = W.Dropdown(options=methods, value=method, description="方法")
        self._sized([self.budget, self.method], ("110px", "170px"), ("480px", "min(100%, 720px)"))
        self.stats = W.HTML()
        self.output = W.HTML()
        self.widget = self._root([self.budget, self.method, self.stats, self.output])
        self.budget.observe(lambda _: self.update(), names="value")
        self.method.observe(lambda _: self.update(), names="value")
        self.update()

    def update(self) -> str:
        """Recompute for the current slider and method; returns what the model receives."""
        budget, method = self.budget.value, self.method.value
        if method == "smart_truncate":
            head, tail = head_and_tail(self.input_text, budget)
            result = truncate_parts(self.input_text, budget, head, tail).text
        else:
            result = parse_tool_result(self.value, max_tokens=max(budget // 4, 1))
        cut = result != self.input_text
        self.result = result
        self.state.update(method=method, budget=budget, input_chars=len(self.input_text),
                          output_chars=len(result), cut=cut)
        mark = MARKS["pass"] if len(result) <= budget else MARKS["warn"]
        self.stats.value = html.escape(
            f"原文 {len(self.input_text):,} 字符 → 模型收到 {len(result):,} 字符 {mark}（{method}，预算 {budget}）"
            + ("，有删减" if cut else "，原样保留"))
        self.output.value = ("<pre style='white-space:pre-wrap;max-height:260px;overflow:auto;"
                             f"border:1px solid #ccc;padding:4px'>{html.escape(result)}</pre>")
        return result

    def _picture(self) -> dict[str, str]:
        return self._html_picture(f"<p>{self.stats.value}</p>", self.output.value)

    def _text(self) -> str:
        s = self.state
        return (f"{self.title}：原文 {s['input_chars']} 字符，{s['method']} 预算 {s['budget']} → "
                f"{s['output_chars']} 字符")
