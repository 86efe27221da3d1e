"""The code reads alike everywhere: ruff (configured in pyproject.toml, pinned in constraints.txt) finds nothing
in toolkit/ and tests/, and no line of toolkit/ is over 120 characters.

Run as a test so CI's command needs no change. Skips, saying why, where ruff is not installed (it is pinned in
requirements-ci.txt, so CI always runs it). Line length is counted in characters here: ruff counts a Chinese
character as two columns, so its own E501 is off (pyproject.toml says so).
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_CHARS = 120


def test_ruff_finds_nothing_in_the_toolkit_and_the_tests():
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -r requirements-ci.txt)")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "toolkit", "tests"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def long_lines(folder: Path) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{n} ({len(line)} characters)" for path in sorted(folder.rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > MAX_CHARS]


def test_no_line_of_the_toolkit_is_over_120_characters():
    assert not long_lines(ROOT / "toolkit")


def test_the_line_count_counts_characters_not_bytes_or_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "a.py").write_text("x = '" + "中" * 114 + "'\n" + "y = '" + "a" * 115 + "'\n", encoding="utf-8")
    assert long_lines(tmp_path) == ["a.py:2 (121 characters)"]  # 120 Chinese-wide characters pass, 121 do not
