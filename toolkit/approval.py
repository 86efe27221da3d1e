"""Approval before a write: a person says yes or no before a tool that changes something runs.

A tool registered with `needs_approval=True` is not run by `run_agent` until its call is approved. The
`approve=` setting of `run_agent` decides, never by waiting:

- a function `approve(pending) -> bool | str` (True runs the call; False or a reason in a str denies it),
- True / False: approve or deny every such call (scripts and CI),
- None (the default): the run pauses. It returns with `stopped="needs_approval"` and the pending call in
  `run.pending` (tool, arguments, why the model wants it); `resume(run, approved, reason)` goes on from
  there, and a widget (toolkit.widgets.ApprovalPanel) does the same with two buttons.

A denied call is a tool result the model reads (error_code APPROVAL_DENIED, with the person's reason), so the
model can explain it or do something else; it is never retried by the loop. A call to a tool whose fallback needs
approval waits too (the executor may run the fallback in its place), and says so in `describe()`.

Approval is the loop's job, not the executor's: `ToolExecutor.run_tool_call` runs what it is given, as calling
the function would. Deciding needs what only the loop has: the model's words before the call (why), a run that
can stop at that call and resume there, and a conversation that takes a denial as the call's result. Code that
calls the executor itself is the one deciding (a script that sends has approved); to let a person decide, run
the tools through run_agent. Tools served over MCP carry the same mark (toolkit.mcp: MCPServer.registry).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Union

from .redaction import safe_str
from .results import FATAL, ErrorCode, ToolResult

__all__ = ["Approve", "PendingCall", "decide", "denied_result"]


@dataclass(frozen=True)
class PendingCall:
    """A tool call waiting for a person: what would run, and the model's words before it (why)."""

    call_id: str
    tool: str
    arguments: Any
    why: str
    fallback: str | None = None  # set when the tool itself needs no approval but its fallback (a write) does

    def describe(self) -> str:
        """One line in Chinese for a person to decide on."""
        args = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments, ensure_ascii=False)
        reason = f"；模型的说明：{safe_str(self.why, 200)}" if self.why else ""
        if self.fallback:
            return (f"模型要调用 {self.tool}（{safe_str(args, 300)}）；它不可用时会改用写操作 {self.fallback}，"
                    f"所以这次调用也要先审批{reason}")
        return f"模型要调用写操作 {self.tool}（{safe_str(args, 300)}）{reason}"


Approve = Union[bool, None, Callable[[PendingCall], Any]]


def decide(approve: Approve, pending: PendingCall) -> tuple[bool | None, str]:
    """(True to run, False to deny, None to pause; the reason for a denial) under the `approve` setting.

    A function that raises or returns something else than a bool or a str denies the call, with its error as
    the reason: a broken approval never lets a write through.
    """
    if approve is None:
        return None, ""
    if isinstance(approve, bool):
        return approve, "" if approve else "设置为拒绝所有写操作"
    try:
        answer = approve(pending)
    except Exception as exc:  # a broken approval function denies: it never lets a write through
        return False, f"审批函数出错（{type(exc).__name__}: {safe_str(exc, 120)}），按拒绝处理"
    if answer is True:
        return True, ""
    if answer is False or answer is None:
        return False, "审批人拒绝"
    if isinstance(answer, str):
        return False, answer
    return False, f"审批函数返回了 {type(answer).__name__}，应返回 True/False 或拒绝理由，按拒绝处理"


def denied_result(pending: PendingCall, reason: str, started_at: float) -> ToolResult:
    """The result the model reads for a denied call: not run, why, and what it may do instead."""
    return ToolResult(pending.tool, None,
                      f"这次写操作没有执行：{safe_str(reason, 200) or '审批人拒绝'}。不要用同样的参数重试；"
                      "可以换个做法，或向用户说明没有执行的原因",
                      error_type=FATAL, error_code=ErrorCode.APPROVAL_DENIED, attempts=0, truncated=False,
                      call_id=pending.call_id, started_at=started_at,
                      args_summary=safe_str(pending.arguments, 200))
