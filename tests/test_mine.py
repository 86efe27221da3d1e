"""toolkit.mine: a piece saved from a real IPython cell is checked by its chapter's checks first, becomes a file the
student can read, and loads alone; a later chapter takes the earlier pieces with pieces()."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from toolkit import SimulatedClock, ToolExecutor, use_clock
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


HEAD_ONLY = '''
import json

LIMIT = 10

def _head(text, n):
    return text[:n]

def my_truncate(text, max_chars):
    """课堂版：只留开头。"""
    return _head(text, max_chars) if len(text) > max_chars else text

print(my_truncate("x" * 30, LIMIT))   # a demo call: not saved
'''

# chapter 02's final version, as the chapter writes it
CHAPTER_02 = (Path(__file__).resolve().parent / "chapters_my_toolkit" / "truncate.py").read_text(encoding="utf-8")


def test_a_version_that_fails_its_chapters_checks_is_not_saved_and_the_student_is_told(shell, my_dir, capsys):
    run_cell(shell, HEAD_ONLY)
    assert mine.save("truncate", shell.user_ns["my_truncate"]) is None
    said = capsys.readouterr().out
    assert not (my_dir / "truncate.py").exists()
    assert "✘ 没有保存 my_truncate：没有通过第 02 章的 7 项检查：不超过 max_chars 的文本原样返回；" in said
    assert "结尾的「总计：9692」被保留……" in said and "开头在一行末尾结束" not in said  # three named, check() has all
    assert "my_toolkit/truncate.py 还没有保存过任何版本" in said and "anyway=True" in said


def test_anyway_saves_a_failing_version_the_cells_definitions_without_its_demo_calls(shell, my_dir, capsys):
    run_cell(shell, HEAD_ONLY)
    path = mine.save("truncate", shell.user_ns["my_truncate"], anyway=True)
    text = path.read_text(encoding="utf-8")
    assert path == my_dir / "truncate.py" and (my_dir / "__init__.py").exists()
    assert "def _head(" in text and "LIMIT = 10" in text and "import json" in text
    assert "print(" not in text and text.rstrip().endswith("PIECE = my_truncate")
    said = capsys.readouterr().out
    assert "⚠ 照你的要求保存了，但这个版本没有通过第 02 章的" in said
    assert "已保存 my_truncate → my_toolkit/truncate.py" in said
    piece = mine.load()["truncate"]
    assert piece.ok and piece.fn("abcdefghijklmnop", 4) == "abcd"


def test_a_version_that_passes_is_saved_and_a_later_failing_one_keeps_it(shell, my_dir, capsys):
    run_cell(shell, CHAPTER_02.replace("PIECE = smart_truncate", ""))
    assert mine.save("truncate", shell.user_ns["smart_truncate"]) == my_dir / "truncate.py"
    assert capsys.readouterr().out.startswith("✔ 第 02 章的 7 项检查全部通过\n已保存 smart_truncate")
    before = (my_dir / "truncate.py").read_text(encoding="utf-8")
    run_cell(shell, HEAD_ONLY)
    assert mine.save("truncate", shell.user_ns["my_truncate"]) is None
    assert "my_toolkit/truncate.py 仍是上一次保存的版本" in capsys.readouterr().out
    assert (my_dir / "truncate.py").read_text(encoding="utf-8") == before


def test_a_helper_from_another_cell_is_named_or_saved_with_it(shell, my_dir, capsys):
    run_cell(shell, "def helper(text, max_chars):\n    return text[:max_chars]\n")
    run_cell(shell, "def uses_helper(text, max_chars):\n    return helper(text, max_chars)\n")
    with pytest.raises(ValueError, match="helper") as caught:
        mine.save("truncate", shell.user_ns["uses_helper"])
    assert "同一个单元格" in str(caught.value) and "save('truncate', uses_helper, helper)" in str(caught.value)
    assert not (my_dir / "truncate.py").exists()
    text = mine.save("truncate", shell.user_ns["uses_helper"], shell.user_ns["helper"], anyway=True).read_text(
        encoding="utf-8")
    assert text.index("def helper(") < text.index("def uses_helper(")  # the helper's cell first


def test_a_class_is_saved_with_the_cells_of_its_base_classes(shell, my_dir):
    run_cell(shell, "class Base:\n    LIMIT = 3\n\n    def __init__(self, limit=LIMIT):\n        self.limit = limit\n")
    run_cell(shell, "class Middle(Base):\n    def double(self):\n        return self.limit * 2\n")
    run_cell(shell, "class Top(Middle):\n    def triple(self):\n        return self.limit * 3\n\n\nTop().triple()\n")
    text = mine.save("executor", shell.user_ns["Top"], anyway=True).read_text(encoding="utf-8")
    assert text.index("class Base") < text.index("class Middle(Base)") < text.index("class Top(Middle)")
    assert "Top().triple()" not in text and text.rstrip().endswith("PIECE = Top")
    assert mine.load("executor")["executor"].fn(limit=2).double() == 4


def test_a_function_defined_inside_another_is_not_a_missing_name(shell, my_dir):
    run_cell(shell, "def outer(text, max_chars):\n    def inner(t):\n        return t[:max_chars]\n"
                    "    return inner(text)\n")
    assert mine.save("truncate", shell.user_ns["outer"], anyway=True) is not None


@pytest.mark.parametrize("slot, fn, message", [
    ("truncat", len, "没有叫"),
    ("truncate", "not a function", "应该是函数"),
    ("truncate", len, "不是用 def 或 class 写的"),
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
    (my_dir / "loop.py").write_text("from toolkit.mine import pieces\nmy = pieces('executor', 'format_message')\n"
                                    "PIECE = my.executor\n", encoding="utf-8")
    (my_dir / "executor.py").write_text("from toolkit.mine import load\nload('executor')\n", encoding="utf-8")
    pieces = mine.load()
    assert list(pieces) == list(mine.SLOTS)
    assert pieces["parse"].ok and pieces["parse"].fn("x", 5) == "x"
    assert pieces["truncate"].problem == "还没有保存"
    assert "retry.py 加载失败第 1 行：SyntaxError" == pieces["retry"].problem
    assert pieces["evaluate"].problem == "evaluate.py 加载失败：SystemError"
    assert "PIECE" in pieces["check"].problem
    assert pieces["executor"].problem == "executor.py 加载失败：它用 pieces() 或 load() 读了它自己"
    assert pieces["loop"].ok  # what it read of the broken executor was the toolkit's stand-in
    with pytest.raises(ValueError, match="没有叫 'nope' 的位置"):
        mine.load("nope")


def test_pieces_hands_the_students_saved_pieces_and_the_toolkits_for_the_rest_and_says_which(my_dir):
    my_dir.mkdir()
    (my_dir / "truncate.py").write_text(CHAPTER_02, encoding="utf-8")
    my = mine.pieces("parse", "truncate", "retry")
    assert my.mine == ["truncate"] and my.truncate.__module__ == "my_toolkit_truncate"
    assert my.parse is mine.toolkit_parse and my.retry is mine.toolkit_piece("retry")
    shown = repr(my)
    assert "✔ truncate        你在第 02 章保存的 smart_truncate" in shown
    assert "○ parse           还没有保存（第 01 章）：先用 toolkit 的 toolkit_parse 代替" in shown
    for wrong, message in ((("nope",), "没有叫"), (("loop",), "没有 toolkit 的替身"), ((), "要哪些部件")):
        with pytest.raises(ValueError, match=message):
            mine.pieces(*wrong)


def test_the_toolkits_stand_ins_fit_the_executors_plug_in_points():
    """ToolExecutor with the toolkit's own parse, truncate and retry plugged in hands the model what it hands
    without them: the stand-ins have the slots' shapes (the truncate one keeps the budget, marker included)."""
    report = "\n".join(f"第 {i} 行" for i in range(400)) + "\n总计：9692"

    async def both():
        plugged = ToolExecutor(result_max_chars=100, **{s: mine.toolkit_piece(s) for s in ("parse", "truncate",
                                                                                            "retry")})
        return [await ex.execute(lambda: report, "read_report") for ex in (plugged, ToolExecutor(result_max_chars=100))]

    with use_clock(SimulatedClock(seed=0)):
        plugged, default = asyncio.run(both())
    assert plugged.status == "success" and plugged.data == default.data and "总计：9692" in plugged.data


def test_without_the_setting_pieces_go_to_my_toolkit_in_the_project(monkeypatch):
    monkeypatch.delenv(mine.MY_DIR_ENV, raising=False)
    assert mine.folder() == Path(mine.__file__).resolve().parent.parent / "my_toolkit"
