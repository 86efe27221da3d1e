"""Clearing old tool results: a long conversation's tool results kept within a budget, turn after turn.

`clear_tool_results(messages, fmt=..., budget_chars=..., keep_last=..., exempt=...)` returns a copy of the
message list in which, oldest first, tool results are replaced by a short placeholder until the results
together fit `budget_chars`: the last `keep_last` results and the results of `exempt` tools are never
cleared. The placeholder says what was there (tool, arguments, size) and how to get it back: `read_more`
with its result id when the result carried one, else the same call again. Only a result's content changes:
every tool call keeps its result and every id still matches, so the list stays valid for its API (Chat
Completions, the Responses API, Anthropic Messages). The input list is never modified.

This is what Anthropic's context editing (`clear_tool_uses`) does on the server, written where a student can
read it and run it against any model.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .redaction import safe_str

__all__ = ["CLEARED_MARK", "ClearPolicy", "Cleared", "ToolResultRef", "clear_tool_results", "context_chars",
           "placeholder", "tool_results", "with_read_more"]

CLEARED_MARK = "[已清除]"
_FORMATS = ("openai_chat", "openai_responses", "anthropic")


@dataclass(frozen=True)
class ToolResultRef:
    """Where one tool result sits in a message list, and what it answers."""

    message: int            # index in the list
    block: int | None       # index in an Anthropic user message's content list, else None
    call_id: str
    name: str
    arguments: str
    size: int               # characters of its content
    cleared: bool


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, default=str)


def _calls(messages: list, fmt: str) -> dict[str, tuple[str, str]]:
    """call id -> (tool name, arguments as text), from the assistant's tool calls."""
    found: dict[str, tuple[str, str]] = {}
    for m in messages:
        if not isinstance(m, dict):
            continue
        if fmt == "openai_chat" and m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                found[str(c.get("id"))] = (str(fn.get("name", "")), _text(fn.get("arguments", "")))
        elif fmt == "openai_responses" and m.get("type") == "function_call":
            found[str(m.get("call_id"))] = (str(m.get("name", "")), _text(m.get("arguments", "")))
        elif fmt == "anthropic" and m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    found[str(b.get("id"))] = (str(b.get("name", "")), _text(b.get("input", {})))
    return found


def _results(messages: list, fmt: str) -> Iterator[tuple[int, int | None, str, str]]:
    """(message index, block index, call id, content text) of every tool result, in order."""
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        if fmt == "openai_chat" and m.get("role") == "tool":
            yield i, None, str(m.get("tool_call_id")), _text(m.get("content", ""))
        elif fmt == "openai_responses" and m.get("type") == "function_call_output":
            yield i, None, str(m.get("call_id")), _text(m.get("output", ""))
        elif fmt == "anthropic" and m.get("role") == "user" and isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    yield i, j, str(b.get("tool_use_id")), _text(b.get("content", ""))


def tool_results(messages: list, fmt: str = "openai_chat") -> list[ToolResultRef]:
    """Every tool result of `messages` in order, with the call it answers. Raises ValueError for an unknown fmt."""
    if fmt not in _FORMATS:
        raise ValueError(f"fmt 应是 {', '.join(_FORMATS)} 之一，收到 {fmt!r}")
    calls = _calls(messages, fmt)
    return [ToolResultRef(i, j, call_id, *calls.get(call_id, ("", "")), len(text), text.startswith(CLEARED_MARK))
            for i, j, call_id, text in _results(messages, fmt)]


def context_chars(messages: list) -> int:
    """The size of a message list as the model receives it: characters of its JSON."""
    return len(json.dumps(messages, ensure_ascii=False, default=str))


def _handle(text: str) -> int | None:
    """The result id a tool message offers for read_more ({"more": {"result_id": N}}), if any. The content may
    be that JSON object as text, or (Anthropic's usual shape) a list of blocks whose text blocks carry it."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list):  # [{"type": "text", "text": "{...}"}, ...]: the first text block with a handle
        texts = (b.get("text") for b in value if isinstance(b, dict) and b.get("type") == "text")
        return next((found for t in texts if isinstance(t, str) and (found := _handle(t)) is not None), None)
    more = value.get("more") if isinstance(value, dict) else None
    result_id = more.get("result_id") if isinstance(more, dict) else None
    return result_id if isinstance(result_id, int) and not isinstance(result_id, bool) else None


def placeholder(ref: ToolResultRef, text: str) -> str:
    """What stands in a cleared result's place: what was there, and how to get it back."""
    arguments = safe_str(ref.arguments, 120)
    result_id = _handle(text)
    back = (f"需要时调用 read_more(result_id={result_id}) 重新读取" if result_id is not None
            else f"需要时用同样的参数再调用一次 {ref.name}（{arguments}）")
    return f"{CLEARED_MARK} {ref.name}（{arguments}）的结果（{ref.size} 字符）已从对话中清除以节省上下文；{back}。"


def _replace(message: dict, block: int | None, fmt: str, text: str) -> dict:
    message = dict(message)
    if fmt == "openai_chat":
        message["content"] = text
    elif fmt == "openai_responses":
        message["output"] = text
    else:
        blocks = list(message["content"])
        blocks[block] = {**blocks[block], "content": text}  # type: ignore[index]
        message["content"] = blocks
    return message


def _names(exempt: Any) -> frozenset[str]:
    """The exempt tool names: one name as a str, or an iterable of names. Raises ValueError for anything else."""
    if isinstance(exempt, str):
        return frozenset((exempt,))
    try:
        names = frozenset(exempt)
    except TypeError:
        raise ValueError(f"exempt 应是工具名（str）或工具名的列表，收到 {type(exempt).__name__}") from None
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"exempt 里应都是工具名（str），收到 {bad[0]!r}")
    return names


@dataclass(frozen=True)
class Cleared:
    """The cleared list and what clearing did."""

    messages: list
    cleared: tuple[str, ...] = ()       # call ids whose results were replaced this time
    results_before: int = 0             # characters of all tool results before
    results_after: int = 0              # ... and after
    kept: tuple[str, ...] = field(default=())  # call ids kept by keep_last or exempt


def clear_tool_results(messages: list, *, fmt: str = "openai_chat", budget_chars: int = 8000,
                       keep_last: int = 3, exempt: Iterable[str] = ()) -> Cleared:
    """Replace the oldest tool results with placeholders until all results fit `budget_chars`.

    The last `keep_last` results and every result of an `exempt` tool are kept as they are; already cleared
    results count at their placeholder's size. When the kept ones alone exceed the budget, everything else
    is cleared and the budget is not met (`results_after` says by how much). Never modifies `messages`.
    `exempt` is one tool name (a str) or an iterable of names.
    Raises ValueError for an unknown fmt, a negative keep_last, a budget below 0 or an exempt that is not names.
    """
    if not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 0:
        raise ValueError(f"keep_last 应是不小于 0 的整数，收到 {keep_last!r}：请改成 0 或正整数")
    if not isinstance(budget_chars, int) or isinstance(budget_chars, bool) or budget_chars < 0:
        raise ValueError(f"budget_chars 应是不小于 0 的整数，收到 {budget_chars!r}：请改成 0 或正整数")
    exempt = _names(exempt)
    refs = tool_results(messages, fmt)
    before = sum(r.size for r in refs)
    protected = {id(r) for r in refs[max(len(refs) - keep_last, 0):]} if keep_last else set()
    protected |= {id(r) for r in refs if r.name in exempt}
    out = list(messages)
    total, cleared = before, []
    for ref in refs:
        if total <= budget_chars:
            break
        if id(ref) in protected or ref.cleared:
            continue
        original = out[ref.message]
        text = _text(original["content"][ref.block]["content"] if ref.block is not None
                     else original.get("content" if fmt == "openai_chat" else "output", ""))
        new_text = placeholder(ref, text)
        if len(new_text) >= ref.size:  # a short result costs less than its placeholder: clearing it saves nothing
            continue
        out[ref.message] = _replace(copy.copy(original), ref.block, fmt, new_text)
        total += len(new_text) - ref.size
        cleared.append(ref.call_id)
    kept = tuple(r.call_id for r in refs if id(r) in protected)
    return Cleared(out, tuple(cleared), before, total, kept)


@dataclass(frozen=True)
class ClearPolicy:
    """Settings for `clear_tool_results`, applied by run_agent(clear=...) before every model call."""

    budget_chars: int = 8000
    keep_last: int = 3
    exempt: tuple[str, ...] = ()   # one name as a str is one tool: exempt="send_notice" is ("send_notice",)
    fmt: str = "openai_chat"

    def __post_init__(self) -> None:
        _names(self.exempt)  # checks
        names = (self.exempt,) if isinstance(self.exempt, str) else tuple(dict.fromkeys(self.exempt))
        object.__setattr__(self, "exempt", names)
        clear_tool_results([], fmt=self.fmt, budget_chars=self.budget_chars, keep_last=self.keep_last)  # checks

    def apply(self, messages: list) -> Cleared:
        return clear_tool_results(messages, fmt=self.fmt, budget_chars=self.budget_chars, keep_last=self.keep_last,
                                  exempt=self.exempt)


# What the budget pass (fitting) and the decision (decisions) tell the model to do for more of a cut result; where
# read_more is offered, the message says read_more instead, so the note, the suggestion and the handle agree.
_NARROW = ("需要更多可缩小查询条件再查", "需要细节时缩小范围再查")


def _one_way_to_more(value: Any, instead: str) -> Any:
    """`value` with every "narrow the query" sentence in a "note" or a "suggestion" replaced by `instead`."""
    if isinstance(value, list):
        return [_one_way_to_more(v, instead) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, v in value.items():
        if key in ("note", "suggestion") and isinstance(v, str):
            for sentence in _NARROW:
                v = v.replace(sentence, instead)
        out[key] = _one_way_to_more(v, instead)
    return out


def with_read_more(content: str, result: Any) -> str:
    """A cut result's tool message content with its handle: {"more": {"result_id", "hint"}} after "status",
    so the model can ask for the rest with read_more instead of losing it; the result's note and the decision's
    suggestion then say read_more too, not "narrow the query". Text that is not a JSON object is returned
    unchanged."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if not isinstance(value, dict) or result.result_id is None:
        return content
    more = {"result_id": result.result_id,
            "hint": f"结果被截断了；需要更多时调用 read_more(result_id={result.result_id}, offset=0) 从头逐段读取完整输出"}
    value = _one_way_to_more(value, f"需要更多时调用 read_more(result_id={result.result_id}) 逐段读取完整结果")
    items = list(value.items())
    at = next((i + 1 for i, (k, _) in enumerate(items) if k == "status"), 0)
    return json.dumps(dict(items[:at] + [("more", more)] + items[at:]), ensure_ascii=False)
