"""Every character a student can see is drawn on a fresh Linux, none a box or an emoji-font picture.

What a student sees: the cells (markdown and code) of notebooks/, solutions/ and exercises/, the stored
outputs of notebooks/ and solutions/, the Markdown files beside them and the README, and every string in
toolkit/ (what it returns and prints, error messages, check tables' row titles). Drawn means covered by the
course's page font or by DejaVu Sans, the one font a fresh Linux has (tests/glyphs.py). No browser needed;
tests/test_browser.py applies the same rule to what JupyterLab's page shows.
"""
from __future__ import annotations

import ast
import html
import json
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("fontTools", reason="reading the fonts' cmaps needs fontTools (requirements.txt)")
pytest.importorskip("brotli", reason="reading the page font's WOFF2 needs brotli (requirements-ci.txt)")

from glyphs import (CONTROLS, DEJAVU_FONT, DEJAVU_LIST, EMOJI_REQUEST, ROOT, covered, dejavu,  # noqa: E402
                    describe, font_codepoints, read_list, uncovered)

NOTEBOOK_FOLDERS = ("notebooks", "solutions", "exercises")
TEXT_MIME = ("text/plain", "text/html", "text/markdown", "text/latex")


def notebook_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) for each cell's source and each text a stored output shows."""
    texts = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        where = f"{path.relative_to(ROOT)} cell {i} ({cell.get('id', '?')})"
        texts.append((f"{where} {cell['cell_type']}", "".join(cell["source"])))
        for out in cell.get("outputs", []):
            shown = [out.get("text", "")] + [out.get("data", {}).get(m, "") for m in TEXT_MIME]
            shown += [out.get("ename", ""), out.get("evalue", ""), *out.get("traceback", [])]
            joined = "".join("".join(s) if isinstance(s, list) else s for s in shown)
            texts.append((f"{where} output", html.unescape(joined)))  # "&#10060;" is drawn as ❌
    return texts


def python_strings(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every string literal of a module (f-strings' literal parts included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(f"{path.relative_to(ROOT)}:{node.lineno}", node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def student_texts() -> list[tuple[str, str]]:
    texts = []
    for folder in NOTEBOOK_FOLDERS:
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            texts += notebook_texts(path)
        for path in sorted((ROOT / folder).glob("*.md")):
            texts.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    texts.append(("README.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        texts += python_strings(path)
    return texts


def test_every_character_a_student_sees_is_in_the_page_font_or_dejavu_sans():
    texts = student_texts()
    assert len(texts) > 5000 and any("notebooks/01" in w and "output" in w for w, _ in texts)
    found: dict[str, list[str]] = defaultdict(list)
    for where, text in texts:
        for char in uncovered(text):
            found[char].append(where)
    report = "\n".join(f"{describe({c})}: {len(places)} place(s), e.g. {'; '.join(places[:4])}"
                       for c, places in sorted(found.items()))
    assert not found, ("drawn as a box on a fresh Linux (no emoji or CJK font), or asking for an emoji font; "
                       "use a mark DejaVu Sans has (✔ ✘ ○ ⚠), or add the character to the page font "
                       f"(tools/make_font_subset.py):\n{report}")


def test_the_rule_flags_emoji_only_marks_and_passes_the_course_marks():
    assert uncovered("✔ 通过 ✘ 未通过 ○ 未运行 ⚠ 警告 → × ≤ … — 「」（）：") == set()
    assert uncovered("❌ 工具执行失败") == {"❌"}
    assert uncovered("✅ ⬜ ⏳ ✨") == {"✅", "⬜", "⏳", "✨"}
    assert uncovered("⚠\ufe0f 部分成功") == {EMOJI_REQUEST}  # ⚠ is drawn; the request for its emoji is not
    assert uncovered("\x1b[0;31m第一行\n\t第二行") == set()  # controls are never drawn
    assert uncovered("忽\u200b略\u180e指令") == set()  # nor default-ignorable characters (toolkit/safety.py)
    assert uncovered("\ue000") == {"\ue000"}  # private use: no font here has it


def test_the_collectors_read_outputs_entities_and_f_strings(tmp_path, monkeypatch):
    import test_glyphs

    monkeypatch.setattr(test_glyphs, "ROOT", tmp_path)
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["# 标题"], "metadata": {}},
        {"cell_type": "code", "source": "print(1)", "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["甲\n", "乙"]},
            {"output_type": "execute_result", "data": {"text/html": ["<b>&#10060;</b>"], "image/png": "❌"}},
            {"output_type": "error", "ename": "E", "evalue": "丙", "traceback": ["\x1b[31m丁"]}]}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    text = "".join(t for _, t in notebook_texts(tmp_path / "nb.ipynb"))
    assert all(c in text for c in "标题甲乙❌丙丁")
    (tmp_path / "m.py").write_text('x = 1\nmsg = f"{x} ✅ 完成"\n"""✨ docstring"""\n', encoding="utf-8")
    strings = dict(python_strings(tmp_path / "m.py"))
    assert strings["m.py:2"] == " ✅ 完成" and strings["m.py:3"] == "✨ docstring"


def test_the_committed_dejavu_list_claims_nothing_the_installed_font_lacks():
    listed = read_list(DEJAVU_LIST)
    assert len(listed) > 5000 and 0x2714 in listed and 0x274C not in listed
    if not DEJAVU_FONT.exists():
        pytest.skip(f"no {DEJAVU_FONT} here to compare with (apt-get install fonts-dejavu-core)")
    font = font_codepoints(DEJAVU_FONT)
    assert listed <= font, f"listed but not in the font: {sorted(listed - font)[:20]}"
    assert dejavu() == frozenset(font) and covered() >= frozenset(font)
    assert not CONTROLS & {chr(c) for c in range(0x20, 0x7F)}
