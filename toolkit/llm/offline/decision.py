"""Reading the road's decision in a tool message: what the program says to do next with that result.

The agent loop puts its evaluate plug-in's decision in every tool message, as the content's "decision"
field ({"action", "suggestion"}; toolkit.messages.tool_content), or, after a format_message plug-in's text
that is not a JSON object, as a last line `[DECISION] {...}` (toolkit.plugins.plugin_message). The offline
model reads it the way a real model reads an instruction from the program that framed the choices:

* call_more_tools: it calls the next tool (the [TASK_CONTEXT]'s next step, else the one the suggestion names);
* an answering action (present_directly, summarize_and_present, present_partial, present_broadened) or any
  action it does not know ("stop", "ask_user", ...): it stops calling tools and answers now;
* report_error or retry: the step failed, whatever its status says: it uses none of that result's data;
* retry_with_broader_query on a result that has content: the program called it empty, so it is not used.

Where the decision says what the data alone does not (a failure, a broadened query, an action it does not
know), the answer quotes the suggestion, so the student sees which decision the model followed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...plugins import DECISION_MARK
from ...redaction import safe_str
from ...task_context import split_task_context

__all__ = ["Decision", "decision_in", "without_decision_line", "ANSWERING", "FAILING"]

ANSWERING = frozenset({"present_directly", "summarize_and_present", "present_partial", "present_broadened"})
FAILING = frozenset({"report_error", "retry"})
KNOWN = ANSWERING | FAILING | {"call_more_tools", "retry_with_broader_query"}


@dataclass(frozen=True)
class Decision:
    """One decision as the model reads it: the action and the program's suggestion (both bounded text)."""

    action: str
    suggestion: str

    @property
    def fails(self) -> bool:
        return self.action in FAILING

    @property
    def known(self) -> bool:
        return self.action in KNOWN


def _of(value: Any) -> Decision | None:
    if not isinstance(value, dict):
        return None
    action, suggestion = value.get("action"), value.get("suggestion")
    if not isinstance(action, str) or not action.strip():
        return None
    return Decision(safe_str(action.strip(), 60), safe_str(suggestion, 300) if isinstance(suggestion, str) else "")


def decision_in(content: Any) -> Decision | None:
    """The decision a tool message's content carries (after any [TASK_CONTEXT] block), or None. Never raises."""
    if not isinstance(content, str):
        return None
    try:
        _, body = split_task_context(content)
        body = body.strip()
        if body[:1] == "{":
            try:
                value = json.loads(body)
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict):
                return _of(value.get("decision"))
        last = body.rsplit("\n", 1)[-1].strip()
        if last.startswith(DECISION_MARK):
            return _of(json.loads(last[len(DECISION_MARK):]))
    except Exception:  # text that only looks like a decision line
        return None
    return None


def without_decision_line(content: Any) -> Any:
    """A plug-in's text content without its last `[DECISION] ...` line (the decision is read apart from the data)."""
    if isinstance(content, str) and DECISION_MARK in content:
        head, _, last = content.rpartition("\n")
        if last.strip().startswith(DECISION_MARK):
            return head
    return content
