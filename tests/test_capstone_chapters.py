"""Chapters 01-07 run top to bottom, as a student runs them, build an agent that the capstone passes.

The chapters are executed with nbclient in a fresh copy of notebooks/ with an empty my_toolkit/ (TOOLKIT_MY_DIR):
each chapter's last save(...) cell writes its piece, and chapters 06 and 07 build on what the earlier ones saved.
What they write must be exactly tests/chapters_my_toolkit (the folder every notebook starts from under nbval), and
the capstone run on it must pass every case the toolkit's agent passes.

    python tests/test_capstone_chapters.py      # write tests/chapters_my_toolkit again from the chapters
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "tests" / "chapters_my_toolkit"
CHAPTERS = [next((ROOT / "notebooks").glob(f"0{n}_*.ipynb")) for n in range(1, 8)]
SAVED = ["parse.py", "truncate.py", "retry.py", "format_message.py", "evaluate.py", "executor.py", "loop.py"]


def run_chapters(workdir: Path) -> Path:
    """Execute chapters 01-07 in order from a copy of notebooks/ in `workdir`, with an empty my_toolkit there;
    returns that my_toolkit. A cell error fails with the chapter's name."""
    notebooks = workdir / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    mine = workdir / "my_toolkit"
    before = os.environ.get("TOOLKIT_MY_DIR")
    os.environ["TOOLKIT_MY_DIR"] = str(mine)  # the kernels inherit it
    try:
        for chapter in CHAPTERS:
            nb = nbformat.read(notebooks / chapter.name, as_version=4)
            NotebookClient(nb, timeout=300, kernel_name="python3",
                           resources={"metadata": {"path": str(notebooks)}}).execute()
    finally:
        if before is None:
            os.environ.pop("TOOLKIT_MY_DIR", None)
        else:
            os.environ["TOOLKIT_MY_DIR"] = before
    return mine


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return run_chapters(tmp_path_factory.mktemp("fresh"))


def test_each_chapter_saves_its_checked_piece_and_they_are_the_stored_folder(saved):
    assert sorted(p.name for p in saved.glob("*.py")) == sorted([*SAVED, "__init__.py"])
    for name in SAVED:
        assert (saved / name).read_text(encoding="utf-8") == (FOLDER / name).read_text(encoding="utf-8"), (
            f"{name} differs from what the chapters save: run `python tests/test_capstone_chapters.py`")


def test_the_agent_the_chapters_build_passes_every_case_the_toolkits_passes(saved, monkeypatch):
    from toolkit.capstone import CASES, compare
    from toolkit.mine import load

    monkeypatch.setenv("TOOLKIT_MY_DIR", str(saved))
    pieces = load()
    assert [slot for slot, piece in pieces.items() if piece.ok] == [name[:-3] for name in SAVED]
    assert pieces["executor"].fn.__name__ == "MyExecutor" and pieces["loop"].fn.__name__ == "run_my_agent"
    result = compare(pieces)
    passed = [c.key for c in CASES if result.toolkit[c.key].passed]
    assert passed and all(result.mine[key].passed for key in passed), result.cases_table()
    assert result.failed() == [] and "你的 agent 全部通过" in result.summary()


if __name__ == "__main__":  # write the stored folder again from the chapters
    with tempfile.TemporaryDirectory() as tmp:
        written = run_chapters(Path(tmp))
        for name in SAVED:
            shutil.copy(written / name, FOLDER / name)
    print(f"wrote {len(SAVED)} files to {FOLDER.relative_to(ROOT)}", file=sys.stderr)
