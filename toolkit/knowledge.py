"""What a tool knows about itself, attached where the tool is registered: ToolKnowledge.

The core (the answer check, the decisions, the offline model) names no tool.
Each tool brings what only it knows:

* `required`: data fields the final answer must mention (field -> Chinese label),
  and `answer_rules`: extra checks `rule(answer, data) -> [mismatch, ...]`
  (toolkit.verify runs them when the tool succeeded; a rule that raises is reported
  as a mismatch, never raised);
* `suggestions`: error code -> what to do next (toolkit.decisions);
* `labels`, `render`, `places`: how the offline stand-in model words the tool's
  result (field labels; a whole-answer renderer `render(tool_name, data, say) -> str`,
  where `say(value)` writes one value safely, or None to fall back to the labels)
  and which place names it may pick from a question for the tool's arguments.

Knowledge is kept per tool name, process-wide, because the offline model runs
behind an HTTP server and sees only tool names. Register it with
`ToolKnowledge(...).register(registry, fn, ...)`, which registers the function
and its knowledge together (the course's own tools do so in
`toolkit.tools.default_registry`, and teach theirs when that package is
imported), or with `teach(name, ToolKnowledge(...))`. This module imports
nothing: it knows the tools it was told about, and no others.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["ToolKnowledge", "teach", "forget", "knowledge_for", "knowledge_for_data", "all_knowledge"]

AnswerRule = Callable[[str, dict], Sequence[str]]
Renderer = Callable[[str, Any, Callable[[Any], str]], "str | None"]


@dataclass(frozen=True)
class ToolKnowledge:
    """One tool's knowledge (every field optional; see the module doc).

    recognizes: `fn(data) -> bool`, to tell this tool's data when only the data
    is at hand (check_answer on a plain dict); by default, data that is a dict
    holding every `required` field.
    """

    required: Mapping[str, str] = field(default_factory=dict)
    answer_rules: Sequence[AnswerRule] = ()
    suggestions: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    render: Renderer | None = None
    places: Sequence[str] = ()
    recognizes: Callable[[Any], bool] | None = None

    def matches(self, data: Any) -> bool:
        """Whether `data` looks like this tool's data (never raises)."""
        try:
            if self.recognizes is not None:
                return bool(self.recognizes(data))
            return bool(self.required) and isinstance(data, dict) and all(k in data for k in self.required)
        except Exception:
            return False

    def register(self, registry: Any, fn: Callable, **options: Any) -> Callable:
        """Register `fn` in a ToolRegistry (options as for `registry.register`) and teach this knowledge
        under the tool's name; returns fn."""
        registry.register(fn, **options)
        teach(options.get("name") or fn.__name__, self)
        return fn


_KNOWN: dict[str, ToolKnowledge] = {}
_LOCK = threading.Lock()


def teach(name: str, knowledge: ToolKnowledge) -> ToolKnowledge:
    """Attach `knowledge` to the tool called `name` (replacing what was there); returns it.

    Raises ValueError for an empty name and TypeError when knowledge is not a ToolKnowledge.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"teach 需要工具的名字（非空字符串），收到 {name!r}：请写成 teach(\"工具名\", ToolKnowledge(...))")
    if not isinstance(knowledge, ToolKnowledge):
        raise TypeError(f"teach 的第二个参数应是 ToolKnowledge，收到 {type(knowledge).__name__}："
                        "请写成 teach(\"工具名\", ToolKnowledge(required=..., answer_rules=...))")
    with _LOCK:
        _KNOWN[name] = knowledge
    return knowledge


def forget(name: str) -> None:
    """Drop the knowledge attached to `name` (no error when there is none)."""
    with _LOCK:
        _KNOWN.pop(name, None)


_NOTHING = ToolKnowledge()


def knowledge_for(name: Any) -> ToolKnowledge:
    """The knowledge attached to tool `name`, or an empty ToolKnowledge."""
    return _KNOWN.get(name, _NOTHING) if isinstance(name, str) else _NOTHING


def knowledge_for_data(data: Any) -> ToolKnowledge:
    """The first registered knowledge whose tool's data `data` looks like, or an empty ToolKnowledge."""
    with _LOCK:
        known = list(_KNOWN.values())
    return next((k for k in known if k.matches(data)), _NOTHING)


def all_knowledge() -> dict[str, ToolKnowledge]:
    """A copy of every tool name -> knowledge registered so far."""
    with _LOCK:
        return dict(_KNOWN)
