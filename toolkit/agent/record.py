"""What one run of the agent loop leaves behind: AgentRun, its summary, its readable transcript and its rows."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..redaction import redact, safe_str
from ..results import ErrorCode, ToolResult
from ..shrink import dumps
from ..task_context import TaskContext

__all__ = ["AgentRun", "Stopped", "render_step", "transcript_rows"]

Stopped = Literal["answered", "max_turns", "error", "needs_approval"]
_STOP_WORDS = {"answered": "已回答", "max_turns": "达到轮数上限", "error": "出错", "needs_approval": "等待审批"}
_STATUS_WORDS = {"success": "成功", "partial": "部分成功", "error": "失败"}


@dataclass
class AgentRun:
    """What one run of the loop leaves behind.

    messages: every message of the conversation (system, user, assistant with its
    tool_calls, tool), the list the model was sent, for notebooks to show.
    transcript: one plain dict per step, {"kind": "model" | "tool", "turn", ...,
    "duration_ms"}, in order; a tool step has the tool result's "content" (the
    message without its [TASK_CONTEXT] block) and the "task_context" as the loop
    held it then (a copy; None for a single-step task). tool_results: one ToolResult per tool_call_id,
    as the model read it (after the evaluate plug-in's decision was acted on, see toolkit.decisions.apply_decision);
    their full outputs (`artifact`) are kept within the executor's `history_bytes` like its history
    (toolkit.retention): one over a quarter of it is not kept and the oldest go first, so a long run
    does not hold every call's megabytes. A released one has `artifact` None and `artifact_released`
    (where="run") saying how big it was and why; its `data`, what the model read, stays. A tool such
    as chapter 10's read_more reads the executor's history (`executor.read_artifact`), not this list.
    stopped: "answered", "max_turns" (the loop limit), "error" (the model
    endpoint failed or sent a reply that is not a chat completion; `error` says
    why and `answer` says it in Chinese) or "needs_approval" (a call to a tool that
    needs a person's yes waits in `pending`: toolkit.agent.resume goes on). decisions: what the `evaluate` plug-in
    said about each tool result (empty without one). check: the verdict of the
    `check` plug-in on the answer (None without one, or when it failed: then
    `error` says why). duration_ms is on the run's clock (simulated time under
    `use_clock(SimulatedClock())`). Everything shown (summary, repr, str) is
    redacted: a key the model put in its answer is masked.
    """

    question: str
    answer: str
    stopped: Stopped
    model: str
    turns: int = 0
    messages: list[dict] = field(default_factory=list, repr=False)
    transcript: list[dict] = field(default_factory=list, repr=False)
    tool_results: list[ToolResult] = field(default_factory=list, repr=False)
    task_context: TaskContext | None = field(default=None, repr=False)
    error: str | None = None
    duration_ms: float = 0.0
    decisions: list[dict] = field(default_factory=list, repr=False)
    check: Any = field(default=None, repr=False)
    pending: Any = field(default=None, repr=False)  # a toolkit.approval.PendingCall while stopped="needs_approval"
    paused: Any = field(default=None, repr=False, compare=False)  # the loop's state to resume from (resume())

    @property
    def ok(self) -> bool:
        """True when the model gave a final text answer."""
        return self.stopped == "answered"

    @property
    def repeated_calls(self) -> int:
        """How many tool calls the loop refused as repeats."""
        return sum(1 for r in self.tool_results if r.error_code == ErrorCode.REPEATED_CALL)

    def summary(self) -> str:
        """A few Chinese lines: question, model, turns, tool calls by status, how it ended, the answer."""
        failed = sum(1 for r in self.tool_results if not r.ok)
        lines = [
            f"问题：{self.question}",
            f"模型：{self.model}；模型调用 {self.turns} 轮，用时 {self.duration_ms:.0f} ms",
            f"工具调用：{len(self.tool_results)} 次（成功 {len(self.tool_results) - failed}，"
            f"失败 {failed}，其中重复被拦下 {self.repeated_calls}）",
            f"结束方式：{_STOP_WORDS.get(self.stopped, self.stopped)}",
            f"回答：{self.answer}",
        ]
        if self.task_context is not None:
            ctx = self.task_context
            lines.insert(3, f"任务进度：{ctx.done}/{len(ctx.steps)} 步（{'；'.join(ctx.steps)}）")
        return redact("\n".join(lines))

    def render_transcript(self, max_chars: int = 200) -> str:
        """The transcript as readable Chinese lines, each tool result cut to `max_chars`."""
        return "\n".join(render_step(step, max_chars) for step in self.transcript)

    def rows(self, excerpt_chars: int = 120) -> list[dict]:
        """One row per step, for a table: see transcript_rows."""
        return transcript_rows(self, excerpt_chars)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return redact(f"AgentRun(question={self.question!r}, answer={self.answer!r}, stopped={self.stopped!r}, "
                      f"model={self.model!r}, turns={self.turns}, error={self.error!r}, "
                      f"duration_ms={self.duration_ms:.1f})")


def render_step(step: dict, max_chars: int) -> str:
    """One transcript step as a Chinese line; a tool step shows the task progress as [任务进度 n/m]."""
    head = f"[第 {step['turn']} 轮]"
    ms = f"{step.get('duration_ms', 0.0):.0f} ms"
    if step["kind"] == "model":
        calls = "，".join(f"{c['name']}({c['arguments']})" for c in step["tool_calls"])
        said = f"请求工具 {calls}" if calls else f"回答：{step['content']}"
        return safe_str(f"{head} 模型（{ms}）：{' '.join(said.split())}", max_chars * 4)
    context = step.get("task_context")
    note = f"[任务进度 {context.done}/{len(context.steps)}] " if context is not None else ""
    text = f"{head} 工具 {step['name']} → {step['status']}（{ms}）：{note}{' '.join(step['content'].split())}"
    return safe_str(text, max_chars)


def _excerpt(result: ToolResult | None) -> str:
    """What the model read of a result: its data (already budgeted by the executor), or its error."""
    if result is None:
        return ""
    if result.status == "error" or result.data is None:
        return result.error or ""
    return dumps(result.data)


def transcript_rows(run: AgentRun, excerpt_chars: int = 120) -> list[dict]:
    """One row per step of `run`: turn, role (模型 / 工具), tool, status (in Chinese: 请求工具 or 回答 for the
    model; 成功, 部分成功 or 失败 and the error code for a tool), outcome (the tool result's status, None for
    the model), attempts and an excerpt of at most `excerpt_chars` characters.

    A tool step is read from its ToolResult (the loop records one per tool step, in the same order):
    attempts and what the model read of the data or the error, not the message text.
    """
    results = iter(run.tool_results)
    rows = []
    for step in run.transcript:
        if step["kind"] == "model":
            calls = step["tool_calls"]
            rows.append({"turn": step["turn"], "role": "模型", "tool": "、".join(c["name"] for c in calls) or "—",
                         "status": "请求工具" if calls else "回答", "outcome": None, "attempts": "",
                         "excerpt": safe_str("；".join(c["arguments"] or "{}" for c in calls) if calls
                                             else step["content"] or "", excerpt_chars)})
            continue
        result = next(results, None)
        status = _STATUS_WORDS.get(step["status"], step["status"])
        if step.get("error_code"):
            status += f" {step['error_code']}"
        rows.append({"turn": step["turn"], "role": "工具", "tool": step["name"], "status": status,
                     "outcome": step["status"], "attempts": result.attempts if result is not None else "",
                     "excerpt": safe_str(" ".join(_excerpt(result).split()), excerpt_chars)})
    return rows
