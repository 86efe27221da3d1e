"""Which characters a student's JupyterLab can draw on a fresh Linux: the fonts there and what they cover.

A fresh Linux has DejaVu Sans (fonts-dejavu-core) and no emoji or CJK font; the course serves its page font
(jupyterlab-setup/, last in JupyterLab's font stacks). Chromium draws a character with the first font in the
stack that has it, else with any system font that has it, else as a box. So a character is drawn there exactly
when the page font or DejaVu Sans covers it: `COVERED`, and `uncovered(text)` names what would be a box.

DejaVu Sans is read from the system where it is installed (TOOLKIT_DEJAVU_DIR, default Debian's folder),
else from DEJAVU_LIST, its coverage committed beside this file (`python tests/glyphs.py` writes it from the
installed font). U+FE0F (VARIATION SELECTOR-16) asks for a colour emoji picture of the character before it:
`uncovered` names it too, since what it asks for exists only where an emoji font is installed.
"""
from __future__ import annotations

import os
import unicodedata
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE_FONT = ROOT / "jupyterlab-setup" / "trl_jupyterlab" / "static" / "TRLSansCJKsc-Page.woff2"
DEJAVU_DIR = Path(os.environ.get("TOOLKIT_DEJAVU_DIR", "/usr/share/fonts/truetype/dejavu"))
DEJAVU_FONT = DEJAVU_DIR / "DejaVuSans.ttf"
DEJAVU_LIST = Path(__file__).resolve().parent / "dejavu_sans_coverage.txt"
EMOJI_REQUEST = "\ufe0f"
# never drawn as a glyph: line breaks, tabs and the other C0/C1 controls (an ANSI colour code in a traceback),
# and Unicode's default-ignorable code points (zero-width space, joiners, bidi marks, variation selectors: a
# browser draws nothing for them, with or without a font; toolkit/safety.py lists them to strip them)
_IGNORABLE = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]
CONTROLS = {chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]}
CONTROLS |= {chr(c) for first, last in _IGNORABLE for c in range(first, last + 1)}


def font_codepoints(path: Path) -> set[int]:
    """The code points `path`'s cmap maps to a glyph (a WOFF2 needs brotli)."""
    from fontTools.ttLib import TTFont

    return set(TTFont(str(path), lazy=True).getBestCmap())


def read_list(path: Path = DEJAVU_LIST) -> set[int]:
    """Code points of a coverage list: lines "XXXX" or "XXXX-YYYY" (hex), "#" comments."""
    points: set[int] = set()
    for line in path.read_text(encoding="ascii").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            first, _, last = line.partition("-")
            points.update(range(int(first, 16), int(last or first, 16) + 1))
    return points


def write_list(points: set[int], path: Path = DEJAVU_LIST, source: str = "") -> None:
    ranges: list[list[int]] = []
    for point in sorted(points):
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    lines = [f"# The code points DejaVu Sans covers ({source}), for tests/glyphs.py where the font is not",
             "# installed. Regenerate: python tests/glyphs.py"]
    lines += [f"{a:04X}" if a == b else f"{a:04X}-{b:04X}" for a, b in ranges]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


@lru_cache(maxsize=None)
def dejavu() -> frozenset[int]:
    """DejaVu Sans's coverage: the installed font's, else the committed list."""
    return frozenset(font_codepoints(DEJAVU_FONT) if DEJAVU_FONT.exists() else read_list())


@lru_cache(maxsize=None)
def covered() -> frozenset[int]:
    """Code points drawn on a fresh Linux: the page font's and DejaVu Sans's."""
    return frozenset(font_codepoints(PAGE_FONT)) | dejavu()


def uncovered(text: str) -> set[str]:
    """The characters of `text` a fresh Linux draws as a box (or only with an emoji font)."""
    ok = covered()
    chars = set(text)
    return (chars & {EMOJI_REQUEST}) | {c for c in chars - CONTROLS if ord(c) not in ok}


def describe(chars: set[str]) -> str:
    """ "U+274C ❌ CROSS MARK, ..." for a failure message."""
    return ", ".join(f"U+{ord(c):04X} {c} {unicodedata.name(c, '?')}" for c in sorted(chars))


if __name__ == "__main__":
    if not DEJAVU_FONT.exists():
        raise SystemExit(f"no {DEJAVU_FONT} (apt-get install fonts-dejavu-core)")
    from fontTools.ttLib import TTFont

    version = TTFont(str(DEJAVU_FONT), lazy=True)["name"].getDebugName(5)
    write_list(font_codepoints(DEJAVU_FONT), source=f"DejaVuSans.ttf, {version}")
    print(f"wrote {DEJAVU_LIST.relative_to(ROOT)}")
