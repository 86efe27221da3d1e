"""What an executor keeps of its calls: the bounded history, per-tool statistics and the audit log.

`CallRecords` holds the last `limit` ToolResults and counts every call (the
statistics count all of them, also those the history has forgotten);
`audit_records` turns results into the log the lesson asks for: one dict per
call, redacted, with a short summary of what the model read.
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import IO

from .fitting import fit_for_model
from .results import ToolResult, redact, safe_str
from .safety import redact_value
from .shrink import dumps

__all__ = ["CallRecords", "audit_record"]


@dataclass
class _Stats:
    calls: int = 0
    success: int = 0
    partial: int = 0
    failed: int = 0
    retries: int = 0
    duration_ms: float = 0.0


class CallRecords:
    """The last `limit` results (`history`, a deque) and statistics over every call ever added."""

    def __init__(self, limit: int = 10_000) -> None:
        self.history: deque[ToolResult] = deque(maxlen=limit)
        self._stats: dict[str, _Stats] = {}

    def add(self, result: ToolResult) -> None:
        """Keep `result` and count it."""
        self.history.append(result)
        stats = self._stats.get(result.name)
        if stats is None:  # not setdefault(name, _Stats()): that builds a _Stats on every call
            stats = self._stats[result.name] = _Stats()
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
        """Write the audit log as JSON Lines to an open text file; returns the line count."""
        records = self.audit_records(task_id)
        for record in records:
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
        return len(records)

    def reset(self) -> None:
        """Forget history and statistics."""
        self.history.clear()
        self._stats.clear()


def audit_record(result: ToolResult, task_id: str | None = None) -> dict:
    """One call as the audit log keeps it: who, what, how it ended, a 200-character summary of what the
    model read; no secrets (arguments, errors, sources and the summary are redacted)."""
    source = result.source if result.source is not None else (
        result.artifact.get("source") if isinstance(result.artifact, dict) else None)
    return {
        "task_id": task_id, "tool": result.name, "call_id": result.call_id,
        "arguments": redact(result.args_summary or ""), "status": result.status,
        "error_type": result.error_type, "error_code": result.error_code,
        "error": redact(result.error) if result.error else None,
        "source": redact_value(source) if isinstance(source, (list, str)) else None,  # URLs can carry keys
        "result_summary": redact(safe_str(dumps(fit_for_model(result.data, 200)[0]), 200)),
        "attempts": result.attempts, "duration_ms": round(result.duration_ms, 1),
        "started_at": round(result.started_at, 3),
    }
