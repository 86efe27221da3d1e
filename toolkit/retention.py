"""How much of the tools' full outputs an executor's history keeps: a budget in bytes, not only in results.

`ToolResult.artifact` is a tool's whole output, kept beside the model for code
(charts, statistics, reading the next slice of a result the budget cut). The
model reads a few KB of each; the whole output may be megabytes. So the history
(toolkit.audit.CallRecords) keeps full outputs within a byte budget: an output
larger than a quarter of the budget is not kept at all, and when the kept ones
add up to more than the budget, the oldest are released first. A released
result stays in the history with `artifact` None and `artifact_released` (a
ReleasedArtifact) saying how big the output was and why it went; the caller's
own ToolResult keeps its artifact. An agent run's `AgentRun.tool_results` keeps
full outputs within the same budget the same way (`ArtifactBudget` does the
counting for both), so a long run does not keep every call's megabytes either.
`artifact_text` and `read_slice` read a kept output as text, slice by slice, for a
tool that shows the model more of it: the text is redacted as a whole before any slice is cut, so a secret
is never split across two slices, and no offset shows one the model's first view masked.
"""
from __future__ import annotations

import collections
import itertools
import sys
from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterator, Literal

from .redaction import redact
from .safety import redact_value
from .shrink import bytes_text, dumps, shrink_json

__all__ = ["ReleasedArtifact", "ReleaseReason", "ArtifactBudget", "released", "artifact_bytes", "artifact_text",
           "read_slice", "ARTIFACT_SHARE", "HISTORY_BYTES", "format_bytes"]

HISTORY_BYTES = 64_000_000  # the default budget for the full outputs one executor's history keeps
ARTIFACT_SHARE = 4          # one full output may take at most 1/ARTIFACT_SHARE of the budget

ReleaseReason = Literal["budget", "too_large"]
_WHERE = {"history": ("执行器的历史", "历史里"), "run": ("本次运行的 tool_results（AgentRun）", "本次运行")}


def format_bytes(n: int) -> str:
    """A size as a person reads it: 980 B, 12.3 KB, 2.0 MB (1 KB = 1000 bytes)."""
    if n < 1000:
        return f"{n} B"
    return f"{n / 1000:.1f} KB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


@dataclass(frozen=True, slots=True)
class ReleasedArtifact:
    """Why a history entry no longer holds its full output (`ToolResult.artifact_released`).

    nbytes: the output's estimated size in bytes;
    reason: "budget" (the history's full outputs passed `budget` bytes and this was the
    oldest) or "too_large" (larger than budget / ARTIFACT_SHARE: never kept);
    budget: the history's byte budget then; where: "history" (an executor's
    history) or "run" (an AgentRun's tool_results). `str()` says it in Chinese.
    """

    nbytes: int
    reason: ReleaseReason
    budget: int
    where: Literal["history", "run"] = "history"

    @property
    def message(self) -> str:
        place, holder = _WHERE[self.where]
        if self.reason == "budget":
            why = f"{holder}保留的完整输出合计超过 {format_bytes(self.budget)}，最早的先释放"
        else:
            why = f"单个完整输出最多保留 {format_bytes(self.budget // ARTIFACT_SHARE)}"
        return f"完整输出（约 {format_bytes(self.nbytes)}）已从{place}中释放：{why}；交给模型的结果（data）不受影响"

    def __str__(self) -> str:
        return self.message


_LEAVES = frozenset({str, bytes, bytearray, int, float, complex, bool, type(None), memoryview})


def _parts(obj: Any) -> Iterator[Any]:
    """The objects `obj` holds in memory: a container's storage (read by its base type, so measuring never runs
    a value's own methods: a lazily loaded record is not made to load), an object's __dict__."""
    if isinstance(obj, dict):
        return itertools.chain(dict.keys(obj), dict.values(obj))
    for base in (list, tuple, set, frozenset, collections.deque):
        if isinstance(obj, base):
            return base.__iter__(obj)  # type: ignore[attr-defined]
    fields = getattr(obj, "__dict__", None)
    return iter((fields,)) if isinstance(fields, dict) else iter(())


def artifact_bytes(value: Any, limit: int) -> int:
    """The bytes `value` holds in memory, estimated as sys.getsizeof over it and everything inside it
    (containers and objects' __dict__, each object once, cycles included).

    The count stops as soon as it passes `limit` (the number returned is then
    > limit, not the whole size), so the work is bounded by `limit`: every
    container's own size already counts 8 bytes per item it holds.
    """
    if value is None:
        return 0
    total = sys.getsizeof(value)
    if type(value) in _LEAVES or total > limit:
        return total
    seen, stack = {id(value)}, [_parts(value)]
    while stack:
        part = next(stack[-1], stack)  # the stack itself marks the end of an iterator
        if part is stack:
            stack.pop()
            continue
        if id(part) in seen:
            continue
        seen.add(id(part))
        total += sys.getsizeof(part)
        if total > limit:
            return total
        if type(part) not in _LEAVES:
            stack.append(_parts(part))
    return total


def released(result: Any, size: int, reason: ReleaseReason, budget: int,
             where: Literal["history", "run"] = "history") -> Any:
    """A copy of the ToolResult `result` without its full output, saying how big it was and why it went."""
    return replace(result, artifact=None, artifact_released=ReleasedArtifact(size, reason, budget, where))


class ArtifactBudget:
    """Counts the full outputs a list of results keeps, within `budget` bytes; says which to let go.

    `admit(key, result)` measures `result.artifact` (toolkit.retention.artifact_bytes,
    work bounded by a quarter of the budget). An output that is larger than that
    quarter is not kept: the result comes back released ("too_large"). Otherwise it is counted under `key`, and the
    oldest kept outputs that no longer fit are handed back as (key, bytes) for the
    caller to release ("budget"). An output that is the result's `data` itself
    costs nothing extra (the data is budgeted already).
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.kept_bytes = 0  # the kept full outputs, in bytes (estimated)
        self._kept: collections.OrderedDict[Hashable, int] = collections.OrderedDict()  # key -> bytes, oldest first

    def admit(self, key: Hashable, result: Any, where: Literal["history", "run"] = "history"
              ) -> tuple[Any, list[tuple[Hashable, int]]]:
        """(the result as kept, the (key, bytes) of older outputs to release now)."""
        artifact, limit = result.artifact, self.budget // ARTIFACT_SHARE
        size = 0 if artifact is None or artifact is result.data else artifact_bytes(artifact, limit)
        if size > limit:
            return released(result, size, "too_large", self.budget, where), []
        if size and key is not None:
            self._kept[key] = size
            self.kept_bytes += size
        over: list[tuple[Hashable, int]] = []
        while self.kept_bytes > self.budget and self._kept:
            old, nbytes = self._kept.popitem(last=False)
            self.kept_bytes -= nbytes
            over.append((old, nbytes))
        return result, over

    @classmethod
    def of(cls, executor: Any) -> "ArtifactBudget":
        """A budget as large as `executor`'s history's (ToolExecutor(history_bytes=...)); HISTORY_BYTES for an
        executor of one's own that has none (chapter 06's MyExecutor)."""
        budget = getattr(getattr(executor, "records", None), "history_bytes", None)
        return cls(budget if isinstance(budget, int) and not isinstance(budget, bool) and budget >= 0
                   else HISTORY_BYTES)

    def append(self, results: list, result: Any, where: Literal["history", "run"] = "run") -> None:
        """Append `result` to `results` (an AgentRun's tool_results: the key is its index), its full output
        counted, and release the oldest kept outputs of the list that no longer fit."""
        result, over = self.admit(len(results), result, where)
        results.append(result)
        for index, size in over:
            results[index] = released(results[index], size, "budget", self.budget, where)  # type: ignore[index]

    def forget(self, key: Hashable) -> None:
        """The result under `key` left (with its output): its bytes no longer count."""
        self.kept_bytes -= self._kept.pop(key, 0)

    def clear(self) -> None:
        self._kept.clear()
        self.kept_bytes = 0


def artifact_text(artifact: Any, max_chars: int) -> str:
    """A kept full output as the text a reader pages through, redacted as a whole: a string as it is, bytes
    decoded (UTF-8), anything else as its JSON (toolkit.shrink, at most `max_chars` characters), its secrets
    masked field by field (a secret's field name masks its whole value, as in the model's first view). Slices
    cut from it (read_slice) can only split a mask, never a secret."""
    if isinstance(artifact, str):
        return redact(artifact)
    if isinstance(artifact, (bytes, bytearray, memoryview)):
        return redact(bytes_text(bytes(artifact), len(artifact)))
    value = redact_value(shrink_json(artifact, max_chars))
    if isinstance(value, list) and value:  # one element per line: a reader's slices end between records
        return "[\n" + ",\n".join(dumps(item) for item in value) + "\n]"
    return dumps(value)


def read_slice(text: str, offset: int, max_chars: int) -> dict:
    """`max_chars` characters of `text` from `offset`: {"offset", "text", "next_offset", "total_chars"};
    next_offset is None at the end. A slice that stops before the end and holds a line break ends after its
    last one, so slices of line-per-record text hold whole records (a line longer than the slice is cut)."""
    piece = text[offset: offset + max_chars]
    if offset + len(piece) < len(text):
        cut = piece.rfind("\n")
        if cut > 0:
            piece = piece[:cut + 1]
    end = offset + len(piece)
    return {"offset": offset, "text": piece, "next_offset": end if end < len(text) else None,
            "total_chars": len(text)}
