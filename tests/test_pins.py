"""One environment for every student: requirements.txt applies constraints.txt, which pins everything."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("refresh_constraints", ROOT / "tools" / "refresh_constraints.py")
pins_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pins_tool)


def test_requirements_apply_the_constraints_file():
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()]
    assert "-c constraints.txt" in lines


def test_every_line_of_the_constraints_file_is_an_exact_pin():
    pins = pins_tool.read_pins()
    assert len(pins) > 50  # the whole resolved set, transitive packages included


def test_every_named_requirement_is_pinned():
    pins = pins_tool.read_pins()
    named = {pins_tool.canonical(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0])
             for line in pins_tool.requirement_lines()}
    assert named - set(pins) == set()


def test_a_malformed_pin_is_reported_with_its_line(tmp_path):
    bad = tmp_path / "constraints.txt"
    bad.write_text("openai==3.57.0\nmatplotlib>=3.8\n", encoding="utf-8")
    with pytest.raises(ValueError, match="constraints.txt:2"):
        pins_tool.read_pins(bad)


def test_this_environment_matches_the_pins():
    """Installed with the README's command, the environment is exactly the pinned one."""
    wrong = pins_tool.mismatches(pins_tool.read_pins())
    assert wrong == [], "refresh with tools/refresh_constraints.py or reinstall: " + "; ".join(wrong)
