"""The font JupyterLab's page falls back to (jupyterlab-setup/) covers what a student reads and types: every CJK
character of the course and of JupyterLab's zh-CN menus, all of GB 2312; renamed, with its licence beside it;
and custom.css loads it as the last fallback of JupyterLab's three font stacks."""
from __future__ import annotations

import importlib.util
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
