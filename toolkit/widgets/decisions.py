"""The decision picker: pick a tool result, see which of evaluate_tool_result's actions it gets, and why."""
from __future__ import annotations

import html

import ipywidgets as W

from ..agent.sync import run_sync
from ..clock import SimulatedClock, use_clock
from ..decisions import ACTIONS, evaluate_tool_result
from ..executor import ToolExecutor
from ..faults import inject_faults
from ..redaction import safe_str
from ..results import ToolResult
from ..shrink import dumps
from .base import Panel, cell, table

__all__ = ["DecisionPicker", "ACTION_LABELS", "ACTION_WHY"]

ACTION_LABELS = {
    "present_directly": "直接回答", "retry_with_broader_query": "放宽条件再查", "summarize_and_present": "先摘要再回答",
    "retry": "稍后重试", "report_error": "如实报告错误", "present_partial": "先展示部分结果",
    "present_broadened": "说明这是放宽后的结果", "call_more_tools": "再调用工具",
}
ACTION_WHY = {
    "present_directly": "成功，数据不为空，也不太长：照结果回答即可。",
    "retry_with_broader_query": "调用成功但数据为空：不是出错，是条件太窄。",
    "summarize_and_present": "成功但结果超过长度上限：先摘要，别把整段塞给模型。",
    "retry": "error_type 是 retryable（超时、限流、5xx）：下一次可能成功。",
    "report_error": "error_type 是 fatal（权限、参数、找不到）：再试一百次结果也一样。",
    "present_partial": "status 是 partial：拿到了一部分，先展示，并说清缺了什么。",
    "present_broadened": "程序去掉了条件才查到：数据不满足原条件，回答时要说清。",
    "call_more_tools": "这一步成功，但任务还有下一步：先调用工具完成它。",
}
assert set(ACTION_LABELS) == set(ACTIONS) == set(ACTION_WHY)


def _example_results() -> dict[str, ToolResult]:
    """Results made the real way: a tool, injected faults, a ToolExecutor, a simulated clock."""
    def orders(city: str = "上海") -> list:
        return [{"order_id": 1000 + i, "city": city, "status": "已发货"} for i in range(3)]

    def nothing() -> list:
        return []

    def many() -> list:
        return [{"order_id": 1000 + i, "city": "上海", "status": "已发货", "note": "备注" * 10} for i in range(400)]

    cases = [
        ("成功，三条订单", orders, []),
        ("成功，但结果为空", nothing, []),
        ("成功，但结果很长（400 条）", many, []),
        ("部分结果", orders, ["partial"]),
        ("一直超时（重试用完）", orders, ["timeout"] * 4),
        ("被限流 429", orders, ["rate_limit"] * 4),
        ("权限不足", orders, ["permission"]),
        ("参数错误", orders, ["bad_args"]),
    ]

    async def build() -> dict[str, ToolResult]:
        with use_clock(SimulatedClock(seed=0)):
            executor = ToolExecutor(max_retries=3, result_max_chars=100_000)
            return {label: await executor.execute(inject_faults(fn, plan, latency=0.1), fn.__name__)
                    for label, fn, plan in cases}
    return run_sync(build())


class DecisionPicker(Panel):
    """Pick a tool result; see which of evaluate_tool_result's actions it gets, and why.

    `results`: label -> ToolResult (default: eight made through a real executor with
    injected faults). After a pick: `decision` (the dict evaluate_tool_result returned)
    and `state` (label, action).
    """

    title = "决策选择器"

    def __init__(self, results: dict[str, ToolResult] | None = None, *,
                 question: str = "上海有哪些订单已经发货？", big: bool | None = None) -> None:
        super().__init__(big)
        self.results = results if results is not None else _example_results()
        if not self.results:
            raise ValueError("results must hold at least one ToolResult")
        self.picker = W.Dropdown(options=list(self.results), description="工具结果")
        self.question = W.Text(value=question, description="用户问题")
        self._sized([self.picker, self.question], ("110px", "170px"), ("420px", "min(100%, 720px)"))
        self.result_html = W.HTML()
        self.decision_html = W.HTML()
        self.widget = self._root([self.picker, self.question, self.result_html, self.decision_html])
        self.picker.observe(lambda _: self.update(), names="value")
        self.question.observe(lambda _: self.update(), names="value")
        self.update()

    def pick(self, label: str) -> dict:
        """Select `label` (a key of results) and return the decision."""
        self.picker.value = label
        return self.decision

    def update(self) -> dict:
        label = self.picker.value
        result = self.results[label]
        decision = evaluate_tool_result(result, self.question.value)
        self.decision = decision
        self.state.update(label=label, action=decision["action"])
        shown = [["status", result.status], ["error_type", result.error_type or "—"],
                 ["error_code", result.error_code or "—"], ["attempts", result.attempts],
                 ["data", safe_str(dumps(result.data), 100) if result.data is not None else "—"]]
        if result.error:
            shown.append(["error", result.error])
        self.result_html.value = table(["字段", "值"], shown, nowrap=(0,))
        action = decision["action"]
        self.decision_html.value = (
            f"<p><b>决策：</b>{html.escape(ACTION_LABELS[action])}（{action}）<br>"
            f"<b>为什么：</b>{html.escape(ACTION_WHY[action])}<br>"
            f"<b>说明：</b>{cell(decision.get('message'), 200)}<br>"
            f"<b>建议：</b>{cell(decision.get('suggestion'), 200)}</p>")
        return decision

    def _picture(self) -> dict[str, str]:
        return self._html_picture(f"<p><b>工具结果：</b>{html.escape(self.picker.value)}</p>", self.result_html.value,
                                  self.decision_html.value)

    def _text(self) -> str:
        return f"{self.title}：{self.state['label']} → {self.state['action']}"
