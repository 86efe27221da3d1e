"""The public API type-checks as a student's code uses it (tests/typing/public_api.py), as hynek/stamina does.

mypy reads the toolkit through its py.typed marker; `assert_type` lines in the file
pin what each public name gives back. Skips, saying why, where mypy is not installed
(it is pinned in requirements-ci.txt, so CI always runs it).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_says_it_ships_type_hints():
    assert (ROOT / "toolkit" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_public_api_type_checks_as_the_course_uses_it():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -r requirements-ci.txt)")
    # in a process of its own: mypy.api.run in the test's process leaves about 2.8 million objects alive, and
    # every garbage collection in that pytest worker then took 3 s (the bench tests' gc.collect() rounds: 30 s)
    done = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--python-version", "3.11",
                           "--no-incremental", "--warn-unused-ignores",
                           str(ROOT / "tests" / "typing" / "public_api.py")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
