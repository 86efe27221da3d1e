"""What stands between the loop and a step: a person's yes before a write, clearing before a model call.

`ApprovalGate` is the loop's way of running a reply's tool calls when some of them need approval
(toolkit.approval), their own or their fallback's: the calls before such a call run, then the `approve` setting
decides; with no decision the run pauses (`Paused`) and `resume(run, approved, reason)` goes on from that call.
`cleared(clear, messages)` is what the model is sent under run_agent's `clear=`: a ClearPolicy, or a student's
function, whose failure never stops the run.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

from ..approval import PendingCall, decide, denied_result
from ..clearing import ClearPolicy
from ..guard import PluginError, run_plugin
from ..redaction import safe_str
from ..wire import ToolCall
from .record import AgentRun
from .sync import call_plugin

__all__ = ["ApprovalGate", "Paused", "cleared", "resume"]


class Paused(Exception):
    """A call waits for a person's yes: (turn, the calls of that turn still to run, the PendingCall)."""


class ApprovalGate:
    """The loop's tool step with approvals (a mixin of the loop: it needs registry, approve, given, clock,
    run_record, _run_batch and _append_tool_message)."""

    registry: Any
    approve: Any
    given: dict[str, tuple[bool, str]]
    clock: Any
    run_record: AgentRun
    _run_batch: Callable[[int, Sequence[ToolCall]], None]
    _append_tool_message: Callable[..., None]

    def _run_tools(self, turn: int, calls: Sequence[ToolCall]) -> None:
        """Run a reply's tool calls (each read once, by the caller) in order, a call to a tool that needs
        approval only once a person (or the `approve` setting) said yes; raises Paused, with the calls still
        to run, when nobody has."""
        for i, call in enumerate(calls):
            asks = self._needs_approval(call.name)
            if asks is None:
                continue
            if i:
                self._run_batch(turn, calls[:i])
            pending = PendingCall(call.id or "", call.name, call.parsed if call.parse_error is None else call.arguments,
                                  self._why(), fallback=asks or None)
            approved, reason = self.given.pop(pending.call_id, None) or decide(self.approve, pending)
            if approved is None:
                raise Paused(turn, list(calls[i:]), pending)
            if approved:
                self._run_batch(turn, [call])
            else:
                self._append_tool_message(turn, call, denied_result(pending, reason, self.clock.now()))
            self._run_tools(turn, calls[i + 1:])
            return
        if calls:
            self._run_batch(turn, calls)

    def _needs_approval(self, name: str | None) -> str | None:
        """None when a call to `name` may run without a yes; else "" (the tool needs approval) or the name of
        its fallback that does: the executor may run the fallback in its place (circuit open, service down), and a
        write reached that way waits for a person too. Asked before the call runs, since the executor decides on
        the fallback inside the call."""
        tool = self.registry.get(name) if name else None
        if tool is None:
            return None
        if tool.needs_approval:
            return ""
        fallback = self.registry.get(tool.fallback) if tool.fallback else None
        return fallback.name if fallback is not None and fallback is not tool and fallback.needs_approval else None

    def _why(self) -> str:
        """The text of the model's last message (what it said before its tool calls), for the person deciding."""
        last = self.run_record.messages[-1] if self.run_record.messages else {}
        return safe_str(last.get("content") or "", 300) if last.get("role") == "assistant" else ""


def resume(run: AgentRun, approved: bool, reason: str = "") -> AgentRun:
    """Go on with a run that stopped for approval: its pending call runs (approved) or is denied with `reason`,
    then the loop continues where it stopped, up to its max_turns. Returns the same AgentRun, updated.
    Raises ValueError when the run is not waiting for approval."""
    if run.stopped != "needs_approval" or run.paused is None or run.pending is None:
        raise ValueError(f"这次运行没有在等待审批（stopped={run.stopped!r}），没有可以继续的调用")
    if not isinstance(approved, bool):
        raise ValueError(f"approved 应是 True（批准）或 False（拒绝），收到 {approved!r}")
    loop, turn, calls = run.paused
    loop.given[run.pending.call_id] = (approved, reason or ("" if approved else "审批人拒绝"))
    run.paused = run.pending = None
    return loop.run(loop.max_turns, first_turn=turn, leftover=calls)


def cleared(clear: "ClearPolicy | Callable[[list], list]", messages: list[dict]) -> tuple[list[dict], str | None]:
    """What the model is sent under `clear` (a ClearPolicy, or a function messages -> messages), and why the
    whole list went instead when the function raised or returned something that is not a list of messages."""
    if isinstance(clear, ClearPolicy):
        return clear.apply(messages).messages, None
    try:  # a copy: a function that edits in place edits no record
        value = run_plugin("clear", lambda: call_plugin(clear, copy.deepcopy(messages)))
    except PluginError as failed:
        return messages, f"插件 clear 出错（{failed.detail}），这一轮发送了完整的对话"
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        return value, None
    return messages, f"clear 应返回消息列表，实际返回了 {type(value).__name__}，这一轮发送了完整的对话"
