"""The approval panel: a run paused before a write shows its pending call; 批准 / 拒绝 resume it.

`ApprovalPanel(run)` takes an AgentRun that stopped with stopped="needs_approval" (run_agent's approve=None,
toolkit.approval). It shows the pending call (tool, arguments, the model's words before it), a reason box and
two buttons; a click calls `toolkit.agent.resume(run, approved, reason)` and shows what came next: the next
pending call, or the answer. Tests and instructors drive it from Python: `.approve()`, `.deny("理由")`, and read
`.run`, `.decisions` (every decision made through the panel, in order). Presentation mode as every panel
(`big=`, or `toolkit.widgets.presentation(True)`).
"""
from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from .base import MARKS, Panel, button, cell

__all__ = ["ApprovalPanel"]


class ApprovalPanel(Panel):
    """Approve or deny a paused run's pending write, one call at a time."""

    title = "写操作审批"

    def __init__(self, run: Any, big: bool | None = None) -> None:
        super().__init__(big)
        self.run = run
        self.decisions: list[tuple[str, bool, str]] = []  # (the pending call's description, approved, reason)
        self.reason = W.Text(placeholder="拒绝的理由（会告诉模型）", layout=W.Layout(width="420px"))
        self.approve_button = button("批准", "check", self.approve, "success")
        self.deny_button = button("拒绝", "times", lambda: self.deny(self.reason.value), "danger")
        self.view = W.HTML()
        self.widget = self._root([self.view, W.HBox([self.approve_button, self.deny_button, self.reason])])
        self._show()

    def approve(self) -> None:
        self._decide(True, "")

    def deny(self, reason: str = "") -> None:
        self._decide(False, reason or "审批人拒绝")

    def _decide(self, approved: bool, reason: str) -> None:
        if self.run.stopped != "needs_approval":
            return  # nothing waits: a late click does nothing
        from ..agent import resume

        self.decisions.append((self.run.pending.describe(), approved, reason))
        self.run = resume(self.run, approved, reason)
        self.reason.value = ""
        self._show()

    def _show(self) -> None:
        waiting = self.run.stopped == "needs_approval"
        self.approve_button.disabled = self.deny_button.disabled = self.reason.disabled = not waiting
        done = len(self.decisions)
        if waiting:
            self.view.value = (f"<p>已处理 {done} 个写操作。等待审批：</p>"
                               f"<p style='font-family:monospace'>{cell(self.run.pending.describe(), 400)}</p>")
        else:
            answer = html.escape(self.run.answer).replace("\n", "<br>")
            self.view.value = (f"<p>{MARKS['pass']} 运行结束（{cell(self.run.stopped)}），共审批 {done} 个写操作。</p>"
                               f"<p>{answer}</p>")

    def _picture(self) -> dict[str, str]:
        return self._html_picture(self.view.value)

    def _text(self) -> str:
        if self.run.stopped == "needs_approval":
            return f"{self.title}：等待审批：{self.run.pending.describe()}"
        return f"{self.title}：运行结束（{self.run.stopped}），共审批 {len(self.decisions)} 个写操作"
