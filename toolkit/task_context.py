"""The [TASK_CONTEXT] block: where a multi-step task stands, written and read back in one place.

`TaskContext.render()` writes the block the model reads before a tool result;
`TaskContext.parse(text)` reads it back (the agent's transcript and the offline
model use it, never their own regex). Every marker and label is a named value
here (OPEN, CLOSE, LABELS, RESULT_MARKER): rewording one rewords both sides.
`split_steps` is the one step splitter of the project.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["TaskContext", "with_task_context", "split_task_context", "split_steps",
           "OPEN", "CLOSE", "LABELS", "RESULT_MARKER", "ALL_DONE", "NONE_DONE", "STEP_SEPARATOR"]

OPEN = "[TASK_CONTEXT]"
CLOSE = "[/TASK_CONTEXT]"
RESULT_MARKER = "当前 Tool 调用结果："
# field -> its label in the block; change a label here and render() and parse() both follow
LABELS: dict[str, str] = {"task": "当前任务", "progress": "已完成步骤", "finished": "已完成", "next": "下一步"}
COLON = "："
STEP_SEPARATOR = "；"
NONE_DONE = "无"
ALL_DONE = "所有步骤已完成，请根据结果回答用户"
LATER_LABEL = "之后"  # the steps after the next one, only when there are any


def _one_line(text: Any) -> str:
    """A field as one line: whitespace collapsed, the step separator kept out of a step."""
    return " ".join(str(text).split()).replace(STEP_SEPARATOR, "，")


@dataclass
class TaskContext:
    """Where a multi-step task stands: the task, its steps, and how many are done."""

    task: str
    steps: list[str] = field(default_factory=list)
    done: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.steps, list) or not all(isinstance(step, str) for step in self.steps):
            raise ValueError(f"steps 应是步骤文字的列表，收到 {self.steps!r}：请写成 [\"第一步\", \"第二步\"]")
        if not isinstance(self.done, int) or not 0 <= self.done <= len(self.steps):
            raise ValueError(f"done 是已经完成的步数，应该是 0 到 {len(self.steps)}（步骤数）之间的整数，收到的是 {self.done!r}："
                             "请改成这个范围里的数")

    @property
    def next_step(self) -> str | None:
        """The step to do now, or None when every step is done."""
        return self.steps[self.done] if self.done < len(self.steps) else None

    @property
    def finished(self) -> bool:
        return self.done >= len(self.steps)

    def normalized(self) -> "TaskContext":
        """The context as render() writes it: each field on one line (what parse() gives back)."""
        return replace(self, task=_one_line(self.task), steps=[_one_line(s) for s in self.steps])

    def render(self) -> str:
        """The block, one labelled field per line: task, progress n/m, finished steps, the next step.

        The remaining steps after the next one appear, when there are any, on a
        line of their own ("之后"), so `parse` can rebuild the whole context.
        """
        ctx = self.normalized()
        total = len(ctx.steps)
        lines = [OPEN,
                 f"{LABELS['task']}{COLON}{ctx.task}",
                 f"{LABELS['progress']}{COLON}{ctx.done}/{total}",
                 f"{LABELS['finished']}{COLON}{STEP_SEPARATOR.join(ctx.steps[: ctx.done]) or NONE_DONE}",
                 f"{LABELS['next']}{COLON}{ctx.next_step if ctx.next_step is not None else ALL_DONE}"]
        later = ctx.steps[ctx.done + 1:]
        if later:
            lines.append(f"{LATER_LABEL}{COLON}{STEP_SEPARATOR.join(later)}")
        lines.append(CLOSE)
        return "\n".join(lines)

    @classmethod
    def parse(cls, text: str) -> "TaskContext | None":
        """Read a block written by `render` (alone, or at the start of a tool message); None when
        `text` holds no readable block. parse(ctx.render()) == ctx.normalized(). Never raises."""
        if not isinstance(text, str):
            return None
        block, _ = split_task_context(text)
        block = block if block is not None else text.strip()
        if not (block.startswith(OPEN) and block.rstrip().endswith(CLOSE)):
            return None
        fields: dict[str, str] = {}
        names = {label: name for name, label in LABELS.items()} | {LATER_LABEL: "later"}
        for line in block.splitlines()[1:-1]:
            label, sep, value = line.partition(COLON)
            if sep and label in names and names[label] not in fields:
                fields[names[label]] = value
        match = re.fullmatch(r"(\d+)/(\d+)", fields.get("progress", "").strip())
        if match is None or "task" not in fields:
            return None
        done, total = int(match.group(1)), int(match.group(2))
        finished = fields.get("finished", "").split(STEP_SEPARATOR) if done else []
        upcoming = [fields.get("next", "")] if done < total else []
        later = fields["later"].split(STEP_SEPARATOR) if "later" in fields else []
        steps = finished + upcoming + later
        if len(steps) != total or done > total:
            return None
        return cls(fields["task"], steps, done)

    def advance(self) -> "TaskContext":
        """Mark one more step done (never past the last); returns self."""
        self.done = min(self.done + 1, len(self.steps))
        return self



def with_task_context(content: str, context: TaskContext) -> str:
    """Put the [TASK_CONTEXT] block before a tool result's content."""
    return f"{context.render()}\n{RESULT_MARKER}\n{content}"


def split_task_context(content: str) -> tuple[str | None, str]:
    """Undo with_task_context: (the context block or None, the result content)."""
    if isinstance(content, str) and content.startswith(OPEN) and f"\n{RESULT_MARKER}\n" in content:
        block, _, rest = content.partition(f"\n{RESULT_MARKER}\n")
        return block, rest
    return None, content


# --- the one step splitter ------------------------------------------------------------------

_PUNCT = "，,；;。！!？?"
# A new step starts at 然后/接着/随后 anywhere, or at 再/并且/另外/同时/之后 after a comma.
# Linear time: a run of spaces is entered only at its first character ((?<!\s)), so a
# question of 20,000 spaces is scanned once, not once from each of its spaces.
_STEP_WORDS = re.compile(rf"(?:[{_PUNCT}]|(?<!\s))\s*(?:然后|接着|随后)|[{_PUNCT}]\s*(?:再|并且|另外|同时|之后)")
# fine: also at every clause mark and at these words anywhere (for matching pieces of a question to tools)
_FINE_WORDS = re.compile(rf"然后|接着|之后|随后|并且|而且|另外|同时|顺便|再|[{_PUNCT}\n]")
_TRIM_CHARS = rf"[\s{_PUNCT}、]"
# possessive (++): a repeated alternation that may give nothing back keeps no backtracking state per repeat
_STEP_TRIM = re.compile(rf"^(?:{_TRIM_CHARS}|顺便|再|并且)++|(?<!{_TRIM_CHARS}){_TRIM_CHARS}+$")


def split_steps(question: str, *, fine: bool = False) -> list[str]:
    """Split a multi-step request into its steps.

    Default: at 然后 / 接着 / 随后 (anywhere) and at 再 / 并且 / 另外 / 同时 / 之后
    (after a comma).
    fine=True: also at every clause mark (，。；！？, newline) and at the
    connecting words anywhere: smaller pieces, for matching each to a tool.

    >>> split_steps("帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班")
    ['帮我查一下上海的天气', '查一下今天北京飞上海的航班']

    A question without these words is one step. Raises TypeError for a non-string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question 应该是字符串（用户的问题），收到的是 {type(question).__name__}")
    splitter = _FINE_WORDS if fine else _STEP_WORDS
    parts = (_STEP_TRIM.sub("", part) for part in splitter.split(question))
    return [part for part in parts if part]
