"""The font JupyterLab's page falls back to (jupyterlab-setup/) covers what a student reads and types: every CJK
character of the course and of JupyterLab's zh-CN menus, all of GB 2312; renamed, with its licence beside it;
and custom.css loads it as the last fallback of JupyterLab's three font stacks and gives it to form controls.
The diagram font the mermaid plugin embeds holds every character of the course's diagrams, and the environment
runs the committed build of that plugin."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "jupyterlab-setup" / "trl_jupyterlab" / "static"
CSS = (STATIC / "custom.css").read_text(encoding="utf-8")
pytest.importorskip("brotli", reason="reading WOFF2 needs brotli (requirements-ci.txt)")
spec = importlib.util.spec_from_file_location("make_font_subset", ROOT / "tools" / "make_font_subset.py")
fonts_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fonts_tool)


@pytest.fixture(scope="module")
def page_font():
    from fontTools.ttLib import TTFont

    return TTFont(str(fonts_tool.PAGE_OUT))


def test_the_page_font_covers_the_course_the_zh_cn_menus_and_gb_2312(page_font):
    covered = set(page_font.getBestCmap())
    for what, chars in [("the course's text", fonts_tool.repo_chars()),
                        ("JupyterLab's zh-CN menus", fonts_tool.language_pack_chars()),
                        ("GB 2312's hanzi", fonts_tool.gb2312_chars(16, 87))]:
        missing = sorted(c for c in chars if ord(c) not in covered)
        assert len(chars) > 500 and not missing, f"{what}: {''.join(missing[:40])} (python tools/make_font_subset.py)"


def test_the_page_font_is_renamed_woff2_with_its_licence(page_font):
    assert page_font.flavor == "woff2"
    assert page_font["name"].getDebugName(1) == fonts_tool.FAMILY
    assert "Noto" not in page_font["name"].getDebugName(6)
    assert "SIL Open Font License" in (STATIC / "OFL.txt").read_text(encoding="utf-8")


def test_custom_css_loads_it_last_in_each_font_stack_after_the_system_cjk_fonts():
    face = re.search(r"@font-face\s*{([^}]*)}", CSS).group(1)
    assert f'font-family: "{fonts_tool.FAMILY}"' in face and f'url("{fonts_tool.PAGE_OUT.name}")' in face
    cjk = re.search(r"--trl-cjk-fonts:([^;]*);", CSS).group(1).split(",")
    assert cjk[-1].strip() == f'"{fonts_tool.FAMILY}"' and '"Microsoft YaHei"' in cjk[0] + "".join(cjk)
    for variable in ("--jp-ui-font-family", "--jp-content-font-family", "--jp-code-font-family-default"):
        stack = re.search(rf"{variable}:([^;]*);", CSS).group(1)
        assert "var(--trl-cjk-fonts)" in stack, variable
        assert "Emoji" not in stack, f"{variable}: status marks must not come from an emoji font"


def test_custom_css_gives_form_controls_the_ui_font_stack():
    """A widget's dropdown, its options, a text box, a text area and a button do not inherit the page's font: the
    browser draws them in its control font (boxes for Chinese on a fresh Linux) unless a rule names the stack."""
    rule = re.search(r":where\(([^)]*)\)\s*{([^}]*)}", CSS)
    assert rule and {"button", "input", "select", "option", "textarea"} <= {t.strip() for t in rule.group(1).split(",")}
    assert "font-family: var(--jp-ui-font-family)" in rule.group(2)


def test_the_diagram_font_holds_every_character_of_the_course_diagrams_and_lists_its_cjk():
    """The small font the mermaid plugin puts into each diagram (jupyterlab-setup/labextension): every character of
    every ```mermaid block in notebooks/, exercises/ and solutions/, and the list the plugin reads is its cmap's CJK."""
    from fontTools.ttLib import TTFont

    font = TTFont(str(fonts_tool.DIAGRAM_OUT))
    covered = set(font.getBestCmap())
    drawn = {c for c in fonts_tool.diagram_chars() if fonts_tool.CJK.match(c)}
    assert len(drawn) > 100 and not sorted(c for c in drawn if ord(c) not in covered)
    listed = set(fonts_tool.DIAGRAM_LIST.read_text(encoding="utf-8").strip())
    assert listed == {chr(c) for c in covered if fonts_tool.CJK.match(chr(c))}
    assert font.flavor == "woff2" and font["name"].getDebugName(1) == fonts_tool.FAMILY
    assert fonts_tool.DIAGRAM_OUT.stat().st_size < 100_000  # put into every diagram: small


def test_the_installed_mermaid_font_plugin_is_the_committed_build():
    """jupyterlab-setup installs the plugin built from labextension/ (committed built, so no Node.js is needed):
    the environment running the tests has those very files (reinstall: python -m pip install ./jupyterlab-setup)."""
    import sys

    built = ROOT / "jupyterlab-setup" / "labextension" / "built"
    source = json.loads((ROOT / "jupyterlab-setup" / "labextension" / "package.json").read_text(encoding="utf-8"))
    package = json.loads((built / "package.json").read_text(encoding="utf-8"))
    assert package["name"] == source["name"] and package["version"] == source["version"]
    entry = built / package["jupyterlab"]["_build"]["load"]
    assert entry.exists() and "mermaid-font" in "".join(p.read_text() for p in (built / "static").glob("*.js"))
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / source["name"]
    if not installed.exists():
        pytest.skip(f"jupyterlab-setup is not installed in {sys.prefix} (pip install -r requirements.txt)")
    for path in [built / "package.json", *sorted((built / "static").iterdir())]:
        copy = installed / path.relative_to(built)
        assert copy.exists() and copy.read_bytes() == path.read_bytes(), (
            f"{copy} is not the committed build: python -m pip install ./jupyterlab-setup")


def test_the_two_readmes_say_the_same_about_linux_without_a_chinese_font():
    """The README's quick start and notebooks/README.md: nothing to install, what to do if boxes show anyway (the
    course's JupyterLab setup, not a font package), in the same Chinese words."""
    quick = (ROOT / "README.md").read_text(encoding="utf-8").split("- **Linux without a Chinese font:**", 1)[1]
    said = re.search(r"Linux 没有中文字体也不用装：.*?。\n", quick, re.S).group(0).strip()
    said = " ".join(line.strip() for line in said.splitlines())
    assert "python -m pip install -r requirements.txt" in said and "Ctrl+Shift+R" in said
    assert said in (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
