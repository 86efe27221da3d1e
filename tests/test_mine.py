"""toolkit.mine: a piece saved from a real IPython cell becomes a file the student can read, and loads alone."""
from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from toolkit import mine


@pytest.fixture
def my_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "my_toolkit"
    monkeypatch.setenv(mine.MY_DIR_ENV, str(folder))
    return folder


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    return InteractiveShell.instance()


def run_cell(shell: InteractiveShell, source: str) -> None:
    result = shell.run_cell(source, store_history=True)  # as a notebook runs a cell: its source kept by IPython
    result.raise_error()


CELL = '''
import json

LIMIT = 10

def _head(text, n):
    return text[:n]

def my_truncate(text, max_chars):
    """课堂版：只留开头。"""
    return _head(text, max_chars) if len(text) > max_chars else text

print(my_truncate("x" * 30, LIMIT))   # a demo call: not saved
'''


def test_save_writes_the_cells_definitions_without_its_demo_calls(shell, my_dir, capsys):
    run_cell(shell, CELL)
    path = mine.save("truncate", shell.user_ns["my_truncate"])
    text = path.read_text(encoding="utf-8")
    assert path == my_dir / "truncate.py" and (my_dir / "__init__.py").exists()
    assert "def _head(" in text and "LIMIT = 10" in text and "import json" in text
    assert "print(" not in text and text.rstrip().endswith("PIECE = my_truncate")
    assert "已保存 my_truncate → my_toolkit/truncate.py" in capsys.readouterr().out
    piece = mine.load()["truncate"]
    assert piece.ok and piece.fn("abcdefghijklmnop", 4) == "abcd"


def test_a_helper_from_another_cell_is_named_instead_of_saved_half(shell, my_dir):
    run_cell(shell, "def helper(x):\n    return x\n")
    run_cell(shell, "def uses_helper(text, max_chars):\n    return helper(text)[:max_chars]\n")
    with pytest.raises(ValueError, match="helper") as caught:
        mine.save("truncate", shell.user_ns["uses_helper"])
    assert "同一个单元格" in str(caught.value)
    assert not (my_dir / "truncate.py").exists()


@pytest.mark.parametrize("slot, fn, message", [
    ("truncat", len, "没有叫"),
    ("truncate", "not a function", "应该是函数"),
    ("truncate", len, "不是用 def 写的函数"),
    ("truncate", lambda text, n: text, "找不到"),
])
def test_what_cannot_be_saved_is_a_chinese_error(my_dir, slot, fn, message):
    with pytest.raises(ValueError, match=message):
        mine.save(slot, fn)


def test_load_reports_every_slot_and_a_broken_file_is_one_broken_piece(my_dir):
    my_dir.mkdir()
    (my_dir / "parse.py").write_text("def parse(raw, max_chars):\n    return raw\nPIECE = parse\n", encoding="utf-8")
    (my_dir / "retry.py").write_text("def retry(:\n", encoding="utf-8")
    (my_dir / "evaluate.py").write_text("raise SystemError('boom at import')\n", encoding="utf-8")
    (my_dir / "check.py").write_text("def check(answer, result):\n    return []\n", encoding="utf-8")
    pieces = mine.load()
    assert set(pieces) == set(mine.SLOTS)
    assert pieces["parse"].ok and pieces["parse"].fn("x", 5) == "x"
    assert pieces["truncate"].problem == "还没有保存"
    assert "retry.py 加载失败第 1 行：SyntaxError" == pieces["retry"].problem
    assert pieces["evaluate"].problem == "evaluate.py 加载失败：SystemError"
    assert "PIECE" in pieces["check"].problem


def test_without_the_setting_pieces_go_to_my_toolkit_in_the_project(monkeypatch):
    monkeypatch.delenv(mine.MY_DIR_ENV, raising=False)
    assert mine.folder() == Path(mine.__file__).resolve().parent.parent / "my_toolkit"
