"""What an executor keeps of its calls: the bounded history, per-tool statistics and the audit log.

`CallRecords` holds the last `limit` ToolResults, their full outputs within a
byte budget (toolkit.retention: the oldest released first, each release said on
the result), and counts every call (the statistics count all of them, also those
the history has forgotten, in at most STATS_TOOLS entries); `audit_records`
turns results into the log the lesson asks for: one dict per call, redacted,
with a short summary of what the model read. `read_artifact` pages through a kept
full output by the result's id.
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import IO, Any

from .fitting import fit_for_model
from .redaction import redact, safe_str
from .results import ErrorCode, ToolResult
from .retention import ARTIFACT_SHARE, HISTORY_BYTES, ArtifactBudget, artifact_text, read_slice, released
from .safety import redact_value
from .shrink import dumps

__all__ = ["CallRecords", "audit_record", "UNKNOWN_TOOLS", "OTHER_TOOLS", "STATS_TOOLS"]

UNKNOWN_TOOLS = "(未知工具名)"   # one statistics entry for every tool name the registry does not know
OTHER_TOOLS = "(其他工具)"       # one entry for the names that come after STATS_TOOLS entries
STATS_TOOLS = 1000              # per-tool statistics entries at most (the two above included)
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}  # json.dumps leaves them raw


@dataclass
class _Stats:
    calls: int = 0
    success: int = 0
    partial: int = 0
    failed: int = 0
    retries: int = 0
    duration_ms: float = 0.0


class CallRecords:
    """The last `limit` results (`history`, a deque) and statistics over every call ever added.

    history_bytes: the most bytes of full outputs (`ToolResult.artifact`) the
    history keeps in all; one output over a quarter of it is never kept, and the
    oldest kept ones are released first (toolkit.retention). A released entry
    has `artifact` None and `artifact_released` saying how big it was and why.
    Statistics keep at most STATS_TOOLS entries: every UNKNOWN_TOOL result counts
    under UNKNOWN_TOOLS, and names that come after the last free entry under
    OTHER_TOOLS, so a model inventing tool names cannot grow them.
    """

    def __init__(self, limit: int = 10_000, history_bytes: int = HISTORY_BYTES) -> None:
        self.history: deque[ToolResult] = deque(maxlen=limit)
        self.history_bytes = history_bytes
        self._outputs = ArtifactBudget(history_bytes)  # result_id -> bytes of the full outputs kept, oldest first
        self._stats: dict[str, _Stats] = {}
        self._last_id = 0
        self._paged: tuple[int, str] | None = None  # (result id, its redacted text): the output being paged through

    def next_id(self) -> int:
        """A new result id (1, 2, 3, ... for this executor's life; reset() does not reuse them)."""
        self._last_id += 1
        return self._last_id

    def add(self, result: ToolResult) -> None:
        """Keep `result` (its full output within the byte budget) and count it."""
        self._keep(result)
        self._count(result)

    @property
    def kept_bytes(self) -> int:
        """The full outputs the history holds now, in bytes (estimated)."""
        return self._outputs.kept_bytes

    def _keep(self, result: ToolResult) -> None:
        history = self.history
        if history.maxlen == 0:
            return
        if len(history) == history.maxlen:  # the oldest entry leaves with its full output
            self._outputs.forget(history[0].result_id)
        result, over = self._outputs.admit(result.result_id, result)
        history.append(result)
        for result_id, size in over:
            index = self._index(result_id)  # type: ignore[arg-type]
            if index is not None:
                history[index] = released(history[index], size, "budget", self.history_bytes)

    def _index(self, result_id: int) -> int | None:
        """Where the result with this id is in the history, or None."""
        history = self.history
        if not history or history[0].result_id is None:
            return None
        guess = result_id - history[0].result_id  # ids are consecutive when the executor adds them
        if 0 <= guess < len(history) and history[guess].result_id == result_id:
            return guess
        return next((i for i in range(len(history) - 1, -1, -1) if history[i].result_id == result_id), None)

    def _count(self, result: ToolResult) -> None:
        name = UNKNOWN_TOOLS if result.error_code == ErrorCode.UNKNOWN_TOOL else result.name
        stats = self._stats.get(name)
        if stats is None:  # not setdefault(name, _Stats()): that builds a _Stats on every call
            if len(self._stats) >= STATS_TOOLS - 2 and name not in (UNKNOWN_TOOLS, OTHER_TOOLS):
                name = OTHER_TOOLS
                stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = _Stats()
        stats.calls += 1
        if result.attempts > 1:
            stats.retries += result.attempts - 1
        stats.duration_ms += result.duration_ms
        status = result.status
        if status == "success":
            stats.success += 1
        elif status == "partial":
            stats.partial += 1
        else:
            stats.failed += 1

    def read_artifact(self, result_id: Any, offset: Any = 0, max_chars: int = 2000) -> dict:
        """`max_chars` characters of a kept full output from `offset`, as a tool envelope: a tool that shows the
        model more of a cut result returns it as it is.

        {"status": "ok", "data": {"result_id", "offset", "text", "next_offset",
        "total_chars"}} (next_offset None at the end), or {"status": "error",
        "error": {"code", "message"}} with code OUTPUT_RELEASED (the history no
        longer keeps it, and the message says why), NO_OUTPUT (the call left no
        output), UNKNOWN_RESULT (no such id) or BAD_OFFSET. Never raises.
        """
        if not _whole(result_id) or result_id < 1 or result_id > self._last_id:
            return _error("UNKNOWN_RESULT", f"没有编号为 {safe_str(result_id, 40)} 的工具结果")
        if not _whole(offset) or offset < 0:
            return _error("BAD_OFFSET", f"offset 应是不小于 0 的整数，收到 {safe_str(offset, 40)}")
        index = self._index(result_id)
        if index is None:
            return _error("OUTPUT_RELEASED", f"结果 {result_id} 已不在执行器的历史里（历史只保留最近 "
                                             f"{self.history.maxlen} 个结果），它的完整输出已释放")
        result = self.history[index]
        if result.artifact_released is not None:
            return _error("OUTPUT_RELEASED", f"结果 {result_id} 的{result.artifact_released.message}")
        full = result.artifact if result.artifact is not None else result.data
        if full is None:
            return _error("NO_OUTPUT", f"结果 {result_id}（{result.name}，{result.status}）没有输出可读")
        if self._paged is None or self._paged[0] != result_id:  # redacted as a whole once, then sliced page by page
            self._paged = (result_id, artifact_text(full, self.history_bytes // ARTIFACT_SHARE))
        text = self._paged[1]
        if offset > len(text):
            return _error("BAD_OFFSET", f"offset {offset} 超过了输出的长度 {len(text)}")
        return {"status": "ok", "data": {"result_id": result_id, **read_slice(text, offset, max(max_chars, 1))}}

    def summary(self) -> dict:
        """Totals over every call so far: total_calls, success_rate, avg_duration_ms,
        retries, partial, failed, and per_tool counts."""
        stats = self._stats.values()
        total = sum(s.calls for s in stats)
        return {
            "total_calls": total,
            "success_rate": round(sum(s.success for s in stats) / max(total, 1), 4),
            "avg_duration_ms": round(sum(s.duration_ms for s in stats) / max(total, 1), 1),
            "retries": sum(s.retries for s in stats),
            "partial": sum(s.partial for s in stats),
            "failed": sum(s.failed for s in stats),
            "per_tool": {name: {"calls": s.calls, "success": s.success, "partial": s.partial,
                                "failed": s.failed, "retries": s.retries}
                         for name, s in self._stats.items()},
        }

    def audit_records(self, task_id: str | None = None) -> list[dict]:
        """One dict per result in history (audit_record)."""
        return [audit_record(r, task_id) for r in self.history]

    def export_jsonl(self, file: IO[str], task_id: str | None = None) -> int:
        """Write the audit log as JSON Lines to an open text file; returns the line count. Chinese stays
        readable; the characters str.splitlines() also breaks at (U+0085, U+2028, U+2029) are escaped, so
        every reader sees one record per line."""
        records = self.audit_records(task_id)
        for record in records:
            file.write(json.dumps(record, ensure_ascii=False).translate(_LINE_BREAKS) + "\n")
        return len(records)

    def reset(self) -> None:
        """Forget history, kept outputs and statistics (result ids keep counting up)."""
        self.history.clear()
        self._outputs.clear()
        self._paged = None
        self._stats.clear()


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _error(code: str, message: str) -> dict:
    return {"status": "error", "error": {"code": code, "message": message}}


def audit_record(result: ToolResult, task_id: str | None = None) -> dict:
    """One call as the audit log keeps it: who, what, how it ended, a 200-character summary of what the
    model read; no secrets (arguments, errors, sources and the summary are redacted). The source is kept
    within 1,000 characters of JSON."""
    source = result.source if result.source is not None else (
        result.artifact.get("source") if isinstance(result.artifact, dict) else None)
    if isinstance(source, (list, tuple, str)):  # URLs can carry keys
        source = redact_value(fit_for_model(source, 1000)[0])
    else:
        source = None
    return {
        "task_id": task_id, "tool": result.name, "call_id": result.call_id,
        "arguments": redact(result.args_summary or ""), "status": result.status,
        "error_type": result.error_type, "error_code": result.error_code,
        "error": redact(result.error) if result.error else None,
        "source": source,
        "result_summary": redact(safe_str(dumps(fit_for_model(result.data, 200)[0]), 200)),
        "attempts": result.attempts, "duration_ms": round(result.duration_ms, 1),
        "started_at": round(result.started_at, 3),
    }
