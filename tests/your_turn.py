"""The 轮到你 convention, read from a notebook: where a student writes a few lines in a lesson.

A your-turn is three cells in a row:
  1. markdown starting `**轮到你 N：**` — what to write and which check judges it;
  2. a code cell tagged `your-turn` whose student lines are two placeholder lines,
         # 轮到你：<what to write>
         raise NotImplementedError("轮到你")
     and which ends by running the chapter's check on what it defines (its stored output is the
     check saying 还没有实现: what the student sees before writing);
  3. markdown with `<details><summary>参考写法</summary>` and one ```python block: the lines that
     replace the placeholder, written at indent 0.
`your_turns(nb)` finds them (an AssertionError names what breaks the form); `filled(nb)` is a copy
of the notebook with every placeholder replaced by its 参考写法, as a student who did them all has it;
`assert_your_turns_pass(nb)` holds each of an executed, filled notebook's your-turn cells to 全部通过.
"""
from __future__ import annotations

import copy
import re
import textwrap
from dataclasses import dataclass

TAG = "your-turn"
PLACEHOLDER = 'raise NotImplementedError("轮到你")'
HEADING = re.compile(r"\A\s*\*\*轮到你 (\d+)：\*\*")
FENCE = re.compile(r"```python\n(.*?)```", re.S)
PASSED, NOT_WRITTEN = "全部通过", "还没有实现"


@dataclass(frozen=True)
class YourTurn:
    number: int
    cell: int  # index of the tagged code cell
    answer: str  # the 参考写法, at indent 0


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def your_turns(nb, name: str = "") -> list[YourTurn]:
    cells, turns = nb["cells"], []
    for i, cell in enumerate(cells):
        if TAG not in cell.get("metadata", {}).get("tags", []):
            continue
        where = f"{name}: cell {i} (tagged {TAG})"
        assert cell["cell_type"] == "code", f"{where} is a code cell"
        heading = HEADING.match(_source(cells[i - 1])) if i and cells[i - 1]["cell_type"] == "markdown" else None
        assert heading, f"{where} follows a markdown cell starting **轮到你 N：**"
        source = _source(cell)
        assert source.count(PLACEHOLDER) == 1, f"{where} holds exactly one {PLACEHOLDER}"
        lines = source.splitlines()
        at = next(k for k, line in enumerate(lines) if line.strip() == PLACEHOLDER)
        assert at and lines[at - 1].strip().startswith("# 轮到你："), f"{where}: `# 轮到你：…` right above the placeholder"
        assert re.search(r"\bcheck\(", "\n".join(lines[at:])), f"{where} ends by running a check on what it defines"
        after = _source(cells[i + 1]) if i + 1 < len(cells) and cells[i + 1]["cell_type"] == "markdown" else ""
        assert "<details><summary>参考写法</summary>" in after and "</details>" in after, (
            f"{where}: the next markdown cell opens the 参考写法 on demand (<details><summary>参考写法</summary>)")
        fences = FENCE.findall(after)
        assert len(fences) == 1, f"{where}: the 参考写法 is one ```python block, found {len(fences)}"
        turns.append(YourTurn(int(heading.group(1)), i, fences[0]))
    numbers = [t.number for t in turns]
    assert numbers == list(range(1, len(turns) + 1)), f"{name}: 轮到你 numbered 1, 2, …: {numbers}"
    return turns


def filled(nb, name: str = ""):
    """A copy of `nb` with each your-turn's placeholder lines replaced by its 参考写法."""
    nb = copy.deepcopy(nb)
    for turn in your_turns(nb, name):
        cell = nb["cells"][turn.cell]
        lines = _source(cell).splitlines()
        at = next(k for k, line in enumerate(lines) if line.strip() == PLACEHOLDER)
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        answer = textwrap.indent(textwrap.dedent(turn.answer).rstrip("\n"), indent).splitlines()
        cell["source"] = "\n".join(lines[: at - 1] + answer + lines[at + 1:])
    return nb


def output_text(cell) -> str:
    """What a code cell printed or displayed as text."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(_source({"source": output.get("text", "")}))
        elif "data" in output:
            parts.append(_source({"source": output["data"].get("text/plain", "")}))
        elif output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return "\n".join(parts)


def assert_your_turns_pass(nb, name: str) -> None:
    """Each your-turn cell of the executed, filled notebook `nb` shows the check passing."""
    tagged = [(i, cell) for i, cell in enumerate(nb["cells"]) if TAG in cell.get("metadata", {}).get("tags", [])]
    for number, (i, cell) in enumerate(tagged, 1):
        shown = output_text(cell)
        assert PASSED in shown, f"{name}: 轮到你 {number} (cell {i})'s 参考写法 does not pass its check:\n{shown[-1500:]}"
