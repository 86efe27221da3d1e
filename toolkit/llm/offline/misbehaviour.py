"""The misbehaviour modes, chosen by the model name's suffix ("offline-stand-in:<mode>").

ignore-results: makes numbers up after the tools ran; loop: calls the same
tool with the same arguments forever; unknown-tool: first requests a tool that
does not exist; bad-arguments: first sends arguments that are not JSON, then
arguments that break the schema. After their bad turns the last two behave honestly.
change-arguments: after a failed tool result, calls the same tool again with its
arguments reworded, until a result succeeds or says the tool must not be tried
again (TOOL_FAILURE_LIMIT); then it answers from the last real result.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from ...readback import read_tool_content
from ...redaction import safe_str
from ...results import ErrorCode
from .honest import Reply, call, honest_reply
from .planning import Step, plan, step_for
from .rendering import TAG, answer_from_results, render_reading
from .request import OfferedTool, View, without_first_turns

__all__ = ["variant_reply", "GHOST_TOOLS"]

GHOST_TOOLS = ("query_database", "run_python", "web_search", "ask_oracle_x")
_REWORDINGS = ("", "市", "（中国）", " 今天", " 实时")


def _target(view: View, tools: list[OfferedTool]) -> Step:
    """The step a variant fixes on: the question's first step, else the first tool."""
    steps = plan(view.question, tools)
    return steps[0] if steps else step_for(view.question, tools[0], view.question)


class _Inventor:
    """Made-up numbers, the same for the same question, none of them in the tool results.

    Each number is scaled and shifted the same way, so the invented figures keep
    the real ones' order and look plausible: only the answer check can tell.
    """

    def __init__(self, view: View) -> None:
        self.seen = "".join(content for _, content in view.results)
        seed = int(hashlib.sha256(view.question.encode("utf-8", "replace")).hexdigest()[:8], 16)
        self.scale, self.shift = 1.25 + (seed % 50) / 100, 3 + seed % 97

    def number(self, real: float = 5000) -> int:
        value = int(real * self.scale) + self.shift
        while str(value) in self.seen:
            value += 1
        return value

    def swap(self, value: Any, depth: int = 0) -> Any:
        """`value` with every number replaced by a made-up one (the words kept)."""
        if isinstance(value, bool) or depth > 20:
            return value
        if isinstance(value, (int, float)):
            return self.number(value)
        if isinstance(value, dict):
            return {k: self.swap(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self.swap(v, depth + 1) for v in value]
        return value


def _made_up(view: View) -> str:
    """An answer that looks like the honest one, worded by the tools' own renderers, with invented numbers."""
    inventor = _Inventor(view)
    lines = []
    for called, content in view.results:
        reading = read_tool_content(content)
        if reading.status != "error":
            faked = replace(reading, data=inventor.swap(reading.data), status="success")
            lines.append(render_reading(safe_str(called.get("name") or "（未知工具）", 80), faked))
    if not lines:
        lines = [f"查到了：主要数值是 {inventor.number(3000)}，合计约 {inventor.number(9000)}。"]
    return TAG + "\n".join(lines)


def _schema_breaking(schema: dict) -> Any:
    """Arguments that are JSON but break the schema: a wrong type, an extra field, or not an object."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    wrong = {"string": 12345, "integer": "很多", "number": "很多", "boolean": "也许", "array": "不是列表",
             "object": "不是对象"}
    for name, prop in props.items():
        if isinstance(prop, dict) and prop.get("type") in wrong:
            return {name: wrong[prop["type"]]}
    if schema.get("additionalProperties") is False:
        return {"path": "/etc/passwd"}
    return ["这不是一个对象"]


def _not_json(args: dict) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return text[:-1] if len(text) > 2 else "{'query': "


def _reworded(step: Step, turn: int) -> Reply:
    """The step's call with its first text argument reworded for this turn (the arguments otherwise kept)."""
    args = dict(step.args)
    name = next((k for k, v in args.items() if isinstance(v, str) and v), None)
    if name is not None and turn:
        args[name] = f"{args[name]}{_REWORDINGS[turn % len(_REWORDINGS)] or f' #{turn}'}"
    return Reply(tool=step.tool, arguments=json.dumps(args, ensure_ascii=False))


def _changing_arguments(view: View, tools: list[OfferedTool], tool_choice: Any) -> Reply:
    """Tries again with other arguments after every failure, until told to stop; then answers honestly."""
    readings = [(call, read_tool_content(content)) for call, content in view.results]
    if not readings:
        return _reworded(_target(view, tools), 0)
    last = readings[-1][1]
    if last.failed and last.error_code != ErrorCode.TOOL_FAILURE_LIMIT:
        return _reworded(_target(view, tools), view.turns)
    if not last.failed:
        return honest_reply(view, tools, tool_choice)
    real = [(call, content) for (call, content), (_, r) in zip(view.results, readings)
            if r.error_code != ErrorCode.TOOL_FAILURE_LIMIT]
    return Reply(text=answer_from_results(replace(view, results=(real or view.results)[-1:])))


def variant_reply(variant: str, view: View, tools: list[OfferedTool], tool_choice: Any) -> Reply:
    """The reply of the model `variant` ("" is the honest model)."""
    if not tools or variant == "":
        return honest_reply(view, tools, tool_choice)
    if variant == "loop":
        return call(_target(view, tools))
    if variant == "change-arguments":
        return _changing_arguments(view, tools, tool_choice)
    if variant == "ignore-results":
        reply = honest_reply(view, tools, tool_choice)
        return Reply(text=_made_up(view)) if reply.text is not None and view.results else reply
    if variant == "unknown-tool" and view.turns < 1:
        names = {t.name for t in tools}
        ghost = next(n for n in GHOST_TOOLS if n not in names)
        return Reply(tool=ghost, arguments=json.dumps({"query": safe_str(view.question, 200)}, ensure_ascii=False))
    if variant == "bad-arguments" and view.turns < 2:
        step = _target(view, tools)
        schema = next(t.parameters for t in tools if t.name == step.tool)
        bad = _not_json(step.args) if view.turns == 0 else json.dumps(_schema_breaking(schema), ensure_ascii=False)
        return Reply(tool=step.tool, arguments=bad)
    skip = {"unknown-tool": 1, "bad-arguments": 2}.get(variant, 0)
    return honest_reply(without_first_turns(view, skip), tools, tool_choice)
