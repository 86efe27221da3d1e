"""Every chapter is a lesson of the same shape: goals, time, a summary, its exercise; prose renders as prose."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "notebooks").glob("0[1-8]_*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _markdown(path: Path) -> str:
    return "\n".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "markdown")


def test_there_are_eight_chapters_and_the_instructor_demo():
    assert [p.name[:2] for p in CHAPTERS] == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert (ROOT / "notebooks" / "09_instructor_demo.ipynb").exists()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_opens_with_goals_and_time_and_ends_with_a_summary_and_its_exercise(path):
    text = _markdown(path)
    first = "".join(_cells(path)[0]["source"])
    assert first.startswith(f"# {path.name[:2]} · ")
    assert "学习目标" in first and "用时" in first
    assert "本章小结" in text
    assert f"exercises/ex{path.name}" in text, "the summary points to the chapter's exercise"
    assert (ROOT / "exercises" / f"ex{path.name}").exists()


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_markdown_cells_are_prose_not_commented_code(path):
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        lines = [line for line in "".join(cell["source"]).splitlines() if line.strip()]
        assert not (len(lines) > 1 and all(line.startswith("# ") or line == "#" for line in lines)), lines[:2]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_a_notebook_has_its_kernelspec_and_mostly_chinese_prose(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    text = _markdown(path)
    chinese = len(re.findall(r"[\u4e00-\u9fff]", text))
    assert chinese / max(len(re.findall(r"[A-Za-z\u4e00-\u9fff]", text)), 1) > 0.3


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_timestamps_are_stored_in_cell_metadata(path):
    """Timing metadata would change on every re-execution: diffs full of noise, nothing learned."""
    assert not any("execution" in c.get("metadata", {}) for c in _cells(path))
