"""轮到你: the lines a student writes inside a lesson are judged by a check that can tell.

For every lesson notebook: its your-turns have the course's form (tests/your_turn.py), the stored
output of each is the check saying 还没有实现 (what a student sees before writing: the check fails
an empty answer), and the notebook executed with every placeholder replaced by its 参考写法 shows
全部通过 under each (the reference lines really pass the check the cell runs). Chapters that talk
to a model are executed that way by tests/test_chapters_other_model.py already (a student who did
every 轮到你, on another model); the others are executed here, on the offline model.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from support import assert_saved_its_piece, my_toolkit_before, talks_to_model
from your_turn import NOT_WRITTEN, PASSED, assert_your_turns_pass, filled, output_text, your_turns

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# chapters 01-08 and the long-run lessons (10, 11) put code in the student's hands twice at least
WRITES = [p for p in NOTEBOOKS if re.match(r"(0[1-8]|1[01])_", p.name) and "capstone" not in p.name]


def _read(path: Path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_your_turn_has_the_form_and_its_stored_output_is_the_check_failing_an_empty_answer(path):
    nb = _read(path)
    for turn in your_turns(nb, path.name):
        shown = output_text(nb.cells[turn.cell])
        assert NOT_WRITTEN in shown and PASSED not in shown, (
            f"{path.name}: 轮到你 {turn.number} stores the check's verdict on the placeholder ({NOT_WRITTEN})")


@pytest.mark.parametrize("path", WRITES, ids=lambda p: p.stem)
def test_a_lesson_puts_code_in_the_students_hands_twice(path):
    assert len(your_turns(_read(path), path.name)) >= 2, f"{path.name}: at least two 轮到你"


def test_filling_a_your_turn_replaces_its_two_placeholder_lines_at_their_indent():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("**轮到你 1：** 写出条件。"),
        nbformat.v4.new_code_cell('def f(x):\n    if x:\n        # 轮到你：返回 1\n        raise NotImplementedError("轮到你")\n'
                                  '    return 0\n\n\ncheck(f, "ch00")', metadata={"tags": ["your-turn"]}),
        nbformat.v4.new_markdown_cell("<details><summary>参考写法</summary>\n\n```python\nreturn 1\n```\n\n</details>")])
    assert filled(nb).cells[1].source == 'def f(x):\n    if x:\n        return 1\n    return 0\n\n\ncheck(f, "ch00")'
    nb.cells[2].source = "<details><summary>答案</summary>\n\n```python\nreturn 1\n```\n\n</details>"
    with pytest.raises(AssertionError, match="参考写法"):
        your_turns(nb)


ALONE = [p for p in NOTEBOOKS if not talks_to_model(p) and your_turns(_read(p), p.name)]


@pytest.mark.parametrize("path", ALONE, ids=lambda p: p.stem)
def test_the_reference_lines_pass_the_check_their_cell_runs(path, monkeypatch, tmp_path):
    mine = my_toolkit_before(path, tmp_path / "my_toolkit")
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(mine))
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")
    nb = filled(_read(path), path.name)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    assert_your_turns_pass(nb, path.name)
    assert_saved_its_piece(path, mine)

