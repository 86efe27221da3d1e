"""The honest model's turn: call the next tool the question (or the [TASK_CONTEXT]) needs, else answer.

After a tool result, the road's decision in its message comes first (offline.decision): call_more_tools makes
it call the next step (the [TASK_CONTEXT]'s, else the one the suggestion names); any other decision makes it
answer now, even with task steps left; without a decision (evaluate=None), or after retry_with_broader_query,
the [TASK_CONTEXT]'s next step decides.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...readback import read_tool_content
from .decision import decision_in
from .longrun import longrun_reply
from .planning import Step, plan, step_for
from .rendering import answer_from_results, missing_answer, no_tool_answer
from .request import OfferedTool, View

__all__ = ["Reply", "honest_reply", "call"]


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    tool: str | None = None
    arguments: str | None = None  # the raw JSON text the model "generates"


def call(step: Step) -> Reply:
    return Reply(tool=step.tool, arguments=json.dumps(step.args, ensure_ascii=False))


def _next_step_text(view: View) -> str | None:
    """The next step of the last tool message's [TASK_CONTEXT], if one remains (TaskContext.parse)."""
    if not view.results:
        return None
    context = read_tool_content(view.results[-1][1]).context
    return None if context is None else context.next_step or None


def _already_called(view: View, step: Step) -> bool:
    for earlier in view.calls.values():
        try:
            args = json.loads(earlier["arguments"]) if isinstance(earlier["arguments"], str) else earlier["arguments"]
        except (ValueError, TypeError, RecursionError):
            continue
        if earlier["name"] == step.tool and args == step.args:
            return True
    return False


def _forced_tool(tool_choice: Any, tools: list[OfferedTool]) -> OfferedTool | None:
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        return next((t for t in tools if t.name == name), None)
    return None


def _first_turn(view: View, tools: list[OfferedTool], tool_choice: Any) -> Reply:
    forced = _forced_tool(tool_choice, tools)
    steps = [step_for(view.question, forced, view.question)] if forced else plan(view.question, tools)
    if not steps and tool_choice == "required" and tools:
        steps = [step_for(view.question, tools[0], view.question)]
    if not steps:
        return Reply(text=no_tool_answer(tools))
    if steps[0].missing:
        return Reply(text=missing_answer(steps[0].tool, steps[0].missing))
    return call(steps[0])


def honest_reply(view: View, tools: list[OfferedTool], tool_choice: Any) -> Reply:
    if tool_choice == "none" or not tools:
        return Reply(text=answer_from_results(view) if view.results else no_tool_answer([]))
    long = longrun_reply(view, tools)  # a long task over paged results (chapter 10)
    if long is not None:
        return Reply(*long)
    if not view.results:
        return _first_turn(view, tools, tool_choice)
    decision = decision_in(view.results[-1][1])
    if decision is not None and decision.action not in ("call_more_tools", "retry_with_broader_query"):
        return Reply(text=answer_from_results(view))  # the program decided: answer (or report) now
    nxt = _next_step_text(view)
    steps = plan(nxt, tools, view.question) if nxt else []
    ready = steps and not steps[0].missing and not _already_called(view, steps[0])
    if not ready and decision is not None and decision.action == "call_more_tools":
        # call_more_tools: the suggestion may name what is done before what is left; the first step not done
        steps = [s for s in plan(decision.suggestion, tools, view.question) if not _already_called(view, s)]
    if steps and not steps[0].missing and not _already_called(view, steps[0]):
        return call(steps[0])
    return Reply(text=answer_from_results(view))
