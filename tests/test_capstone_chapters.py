"""Chapters 01-07, run as a student runs them, build an agent that the capstone passes.

Each chapter ends by saving one piece of the student's own toolkit (toolkit.mine.save); tests/chapters_my_toolkit
is what they save (the folder every notebook starts from under nbval). Two passes execute every chapter filled in
(tests/test_chapters_other_model.py for the chapters that talk to a model, tests/test_your_turn.py for the others),
each from the stored pieces of the chapters before it only, and hold the piece it saves to the stored one: by
induction, the stored folder is what chapters 01-07 build from an empty one, in order. This file checks those
passes cover every chapter, and runs the capstone on that folder: it must pass every case the toolkit's agent
passes. (Executing the seven chapters once more here, in a row, took 22 s of every run.)

    python tests/test_capstone_chapters.py      # write tests/chapters_my_toolkit again from the chapters
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from support import PIECES

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "tests" / "chapters_my_toolkit"
CHAPTERS = [next((ROOT / "notebooks").glob(f"0{n}_*.ipynb")) for n in range(1, 8)]
SAVED = list(PIECES.values())  # in chapter order


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


def test_every_saving_chapter_is_run_from_the_pieces_before_it_and_held_to_the_stored_folder():
    from test_chapters_other_model import TALKING
    from test_your_turn import ALONE

    covered = sorted(p.name for p in [*TALKING, *ALONE] if p.name[:2] in PIECES and p.name[2] == "_")
    assert covered == [chapter.name for chapter in CHAPTERS], covered
    assert sorted(p.name for p in FOLDER.glob("*.py")) == sorted([*SAVED, "__init__.py"])


def test_the_agent_the_chapters_build_passes_every_case_the_toolkits_passes(monkeypatch):
    from toolkit.capstone import CASES, compare
    from toolkit.mine import load

    monkeypatch.setenv("TOOLKIT_MY_DIR", str(FOLDER))
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
