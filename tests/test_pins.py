"""One environment for every student: requirements.txt applies constraints.txt, which pins everything."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from packaging.markers import default_environment

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
    bad.write_text('openai==3.57.0\nsoupsieve==2.10; python_full_version <<< "3.11.5"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="constraints.txt:2: the marker"):
        pins_tool.read_pins(bad)


def python(version: str) -> dict[str, str]:
    return {**default_environment(), "python_full_version": version, "python_version": version.rsplit(".", 1)[0]}


def test_an_alternative_pin_applies_only_where_its_marker_holds(tmp_path):
    """Debian 12's python3 is 3.11.2, and soupsieve 4.1.3 needs 3.11.5: pip could not install the one pin."""
    alternatives = tmp_path / "constraints.txt"
    alternatives.write_text('openai==3.57.0\nsoupsieve==2.10; python_full_version < "3.11.5"\n'
                            'soupsieve==4.1.3; python_full_version >= "3.11.5"\n', encoding="utf-8")
    assert pins_tool.read_pins(alternatives, python("3.11.2")) == {"openai": "3.57.0", "soupsieve": "2.10"}
    assert pins_tool.read_pins(alternatives, python("3.13.0")) == {"openai": "3.57.0", "soupsieve": "4.1.3"}
    overlapping = tmp_path / "overlapping.txt"
    overlapping.write_text('soupsieve==2.10\nsoupsieve==4.1.3; python_full_version >= "3.11.5"\n', encoding="utf-8")
    assert pins_tool.read_pins(overlapping, python("3.11.2")) == {"soupsieve": "2.10"}
    with pytest.raises(ValueError, match="overlapping.txt:1 and 2: two pins of soupsieve apply on Python 3.12.1"):
        pins_tool.read_pins(overlapping, python("3.12.1"))


SUPPORTED = [f"3.{minor}.{patch}" for minor in (11, 12, 13) for patch in range(0, 15)]  # requires-python >=3.11


def test_every_package_has_exactly_one_pin_on_every_supported_python():
    names = {pin.name for pin in pins_tool.read_pin_lines()}
    for version in SUPPORTED:
        assert set(pins_tool.read_pins(environment=python(version))) == names, version  # none missing, none twice


def test_a_refresh_on_several_pythons_splits_a_package_where_requires_python_begins():
    resolved = {"3.11.2": {"soupsieve": ("2.10", ">=3.10"), "openai": ("3.57.0", ">=3.9")},
                "3.12.1": {"soupsieve": ("4.1.3", ">=3.11.5"), "openai": ("3.57.0", ">=3.9")},
                "3.13.0": {"soupsieve": ("4.1.3", ">=3.11.5"), "openai": ("3.57.0", ">=3.9"), "pip": ("26.1", "")}}
    assert pins_tool.merge(resolved) == ["openai==3.57.0", 'soupsieve==2.10; python_full_version < "3.11.5"',
                                         'soupsieve==4.1.3; python_full_version >= "3.11.5"']
    three = {"3.10.9": {"a": ("1", ">=3.8")}, "3.11.7": {"a": ("2", ">=3.11.5")}, "3.12.1": {"a": ("3", ">=3.12")}}
    lines = pins_tool.merge(three)
    assert lines[1] == 'a==2; python_full_version >= "3.11.5" and python_full_version < "3.12"'
    with pytest.raises(ValueError, match="does not say where"):  # a difference Requires-Python does not explain
        pins_tool.merge({"3.11.2": {"a": ("1", "")}, "3.12.1": {"a": ("3", "")}})
    with pytest.raises(ValueError, match="Python 3.12.2 resolved 1"):
        pins_tool.merge({"3.12.2": {"a": ("1", ">=3.8")}, "3.12.1": {"a": ("3", ">=3.12")}})


def test_this_environment_matches_the_pins():
    """Installed with the README's command, the environment is exactly the pinned one."""
    wrong = pins_tool.mismatches(pins_tool.read_pins())
    assert wrong == [], "refresh with tools/refresh_constraints.py or reinstall: " + "; ".join(wrong)
