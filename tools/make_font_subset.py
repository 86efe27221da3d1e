"""Regenerate the course's subsets of Noto Sans CJK SC: one for the charts, two for JupyterLab's page.

A fresh Linux machine has no CJK font, so the course ships its own.

toolkit/fonts/TRLSansCJKsc-Regular.otf, for the charts (toolkit.viz registers it; matplotlib reads
OpenType, not WOFF2), holds:

* every CJK character used in toolkit/, notebooks/, exercises/, solutions/ and tests/;
* the 3,755 level-1 hanzi of GB 2312 (the most common characters);
* GB 2312's punctuation and symbol rows, CJK punctuation, full-width forms, ASCII, Latin-1.

jupyterlab-setup/trl_jupyterlab/static/TRLSansCJKsc-Page.woff2, the font JupyterLab's page falls back
to (see jupyterlab-setup/), holds all of that plus the 3,008 level-2 hanzi of GB 2312 (so what a
student types is covered too, not only the course's own text) and every character of JupyterLab's
zh-CN language pack (installed in the venv: jupyterlab-language-pack-zh-CN). WOFF2 because only a
browser reads it: about a quarter smaller than the same glyphs as OpenType. Writing WOFF2 needs
brotli (in requirements-ci.txt).

jupyterlab-setup/trl_jupyterlab/static/TRLSansCJKsc-Diagram.woff2 holds the characters of every ```mermaid
block in notebooks/, exercises/ and solutions/ (with ASCII and CJK punctuation), and
TRLSansCJKsc-Diagram.txt beside it lists its CJK characters. JupyterLab shows a mermaid diagram as an
image, which cannot use the page's fonts; where the page uses the course font, the course's JupyterLab
plugin (jupyterlab-setup/labextension) puts this small font into each diagram, or the page font for a
diagram with a CJK character it lacks.

The source is Noto Sans CJK (SIL Open Font License 1.1) from the PyPI package
noto-cjk-sans-otc, face "Noto Sans CJK SC". The subset is renamed "TRL Sans CJK SC"
(a modified version must not carry the original's reserved names and trademarks, and a
distinct name lets tests force this font even where the system has Noto Sans CJK SC).

Usage, from the repository root:
    python tools/make_font_subset.py                     # downloads noto-cjk-sans-otc with pip
    python tools/make_font_subset.py --source NotoSansCJK-Regular.ttc
    python tools/make_font_subset.py --page-only         # only the page's two WOFF2 (the charts' file untouched)
The output is byte-for-byte the same for the same source and the same repository text.
Re-run it after adding chapters whose Chinese uses characters outside the set.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FONT_DIR = ROOT / "toolkit" / "fonts"
OUT = FONT_DIR / "TRLSansCJKsc-Regular.otf"
PAGE_OUT = ROOT / "jupyterlab-setup" / "trl_jupyterlab" / "static" / "TRLSansCJKsc-Page.woff2"
DIAGRAM_OUT = PAGE_OUT.with_name("TRLSansCJKsc-Diagram.woff2")
DIAGRAM_LIST = DIAGRAM_OUT.with_suffix(".txt")
FAMILY = "TRL Sans CJK SC"
POSTSCRIPT = "TRLSansCJKsc-Regular"
SOURCE_PACKAGE = "noto-cjk-sans-otc==0.0.1"
SOURCE_FACE = "Noto Sans CJK SC"
SCANNED = ("toolkit", "notebooks", "exercises", "solutions", "tests")
SCANNED_SUFFIXES = {".py", ".ipynb", ".md", ".txt", ".json", ".csv", ".cfg"}
CJK = re.compile(r"[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def gb2312_chars(first_row: int, last_row: int) -> set[str]:
    """Characters of GB 2312 rows first_row..last_row (row 1-9: symbols, 16-55: level-1 hanzi)."""
    chars = set()
    for row in range(first_row, last_row + 1):
        for cell in range(1, 95):
            try:
                chars.add(bytes([0xA0 + row, 0xA0 + cell]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return chars


def repo_chars() -> set[str]:
    chars: set[str] = set()
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in SCANNED_SUFFIXES and "fonts" not in path.parts:
                chars.update(CJK.findall(path.read_text(encoding="utf-8", errors="ignore")))
    return chars


def wanted_chars() -> set[str]:
    chars = gb2312_chars(1, 9) | gb2312_chars(16, 55) | repo_chars()
    chars.update(chr(c) for c in range(0x20, 0x7F))                # ASCII
    chars.update(chr(c) for c in range(0xA0, 0x100))               # Latin-1
    chars.update(chr(c) for c in range(0x2010, 0x2070))            # general punctuation
    chars.update(chr(c) for c in range(0x3000, 0x3040))            # CJK punctuation
    chars.update(chr(c) for c in range(0xFF01, 0xFF5F))            # full-width forms
    chars.update("−×÷±≤≥≈≠→←↑↓…·•℃µ°")
    return chars


def mermaid_blocks(path: pathlib.Path) -> list[str]:
    """The ```mermaid blocks of a notebook's markdown cells, in order."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [block for cell in cells if cell["cell_type"] == "markdown"
            for block in re.findall(r"```mermaid\n(.*?)```", "".join(cell["source"]), re.S)]


def diagram_chars() -> set[str]:
    """Every character of the course's mermaid diagrams, ASCII and CJK punctuation."""
    chars = {c for folder in ("notebooks", "exercises", "solutions")
             for path in sorted((ROOT / folder).glob("*.ipynb")) for block in mermaid_blocks(path) for c in block}
    chars.update(chr(c) for c in range(0x20, 0x7F))
    chars.update(chr(c) for c in range(0x3000, 0x3040))
    chars.update(chr(c) for c in range(0xFF01, 0xFF5F))
    return {c for c in chars if c.isprintable()}


def language_pack_chars() -> set[str]:
    """Every CJK character of JupyterLab's zh-CN language pack installed in this environment."""
    try:
        import jupyterlab_language_pack_zh_CN as pack
    except ImportError:
        raise SystemExit("the page font covers JupyterLab's zh-CN menus: pip install -r requirements.txt first")
    chars: set[str] = set()
    for path in sorted(pathlib.Path(pack.__file__).parent.rglob("*")):
        if path.suffix == ".json":     # \u-escaped: decode first
            chars.update(CJK.findall(json.dumps(json.loads(path.read_text(encoding="utf-8")), ensure_ascii=False)))
        elif path.suffix == ".mo":     # compiled gettext catalogues hold their strings as UTF-8
            chars.update(CJK.findall(path.read_bytes().decode("utf-8", errors="ignore")))
    return chars


def page_chars() -> set[str]:
    """The charts' characters, the rest of GB 2312 (level-2 hanzi) and JupyterLab's zh-CN UI."""
    return wanted_chars() | gb2312_chars(56, 87) | language_pack_chars()


def download_source(folder: pathlib.Path) -> pathlib.Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder),
                    SOURCE_PACKAGE], check=True)
    wheel = next(folder.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith((".ttc", ".otf")))
        archive.extract(name, folder)
    return folder / name


def load_face(source: pathlib.Path):
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() == ".ttc":
        for font in TTCollection(str(source)).fonts:
            if font["name"].getDebugName(1) == SOURCE_FACE:
                return font
        raise SystemExit(f"{source} has no face named {SOURCE_FACE!r}")
    return TTFont(str(source))


def make_subset(source: pathlib.Path, out: pathlib.Path = OUT, chars: set[str] | None = None,
                flavor: str | None = None) -> tuple[int, int]:
    """Write the subset of `chars` (default: the charts') to `out`, as OpenType or WOFF2 (flavor="woff2");
    returns (characters asked for, bytes written)."""
    from fontTools import subset

    if flavor == "woff2":
        try:
            import brotli  # noqa: F401  (fontTools compresses WOFF2 with it)
        except ImportError:
            raise SystemExit("writing WOFF2 needs brotli: python -m pip install brotli")
    font = load_face(source)
    chars = wanted_chars() if chars is None else chars
    options = subset.Options()
    options.layout_features = ["kern"]   # matplotlib lays out horizontally, glyph by glyph
    options.drop_tables += ["vhea", "vmtx", "VORG", "BASE"]  # vertical writing: charts never use it
    options.name_IDs = ["*"]
    options.hinting = False              # screen charts at 80-100 dpi do not need CFF hints
    options.desubroutinize = False
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in chars))
    subsetter.subset(font)
    rename(font)
    font.recalcTimestamp = False         # same input, same bytes
    font.flavor = flavor
    out.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(out))
    return len(chars), out.stat().st_size


def font_cmap(path: pathlib.Path) -> set[int]:
    """The code points a font file draws."""
    from fontTools.ttLib import TTFont

    return set(TTFont(str(path)).getBestCmap())


def rename(font) -> None:
    names = font["name"]
    for record in list(names.names):
        if record.nameID in (1, 16):
            names.setName(FAMILY, record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 3:
            names.setName(f"{POSTSCRIPT};subset of Noto Sans CJK SC 2.004", 3, record.platformID,
                          record.platEncID, record.langID)
        elif record.nameID == 4:
            names.setName(f"{FAMILY} Regular", 4, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 6:
            names.setName(POSTSCRIPT, 6, record.platformID, record.platEncID, record.langID)
        elif record.nameID in (7, 17, 21, 22):  # trademark line, typographic subfamily aliases
            names.removeNames(nameID=record.nameID)
    cff = font["CFF "].cff
    cff.fontNames = [POSTSCRIPT]
    top = cff.topDictIndex[0]
    for key in ("FullName", "FamilyName"):
        if hasattr(top, key):
            setattr(top, key, FAMILY if key == "FamilyName" else f"{FAMILY} Regular")
    if hasattr(top, "Notice"):
        del top.Notice   # the trademark notice belongs to the original name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=pathlib.Path, help="NotoSansCJK-Regular.ttc or NotoSansCJKsc-Regular.otf")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--page-out", type=pathlib.Path, default=PAGE_OUT)
    parser.add_argument("--page-only", action="store_true", help="write only the page's WOFF2")
    args = parser.parse_args(argv)
    jobs = [] if args.page_only else [(args.out, wanted_chars(), None)]
    jobs.append((args.page_out, page_chars(), "woff2"))
    jobs.append((args.page_out.with_name(DIAGRAM_OUT.name), diagram_chars(), "woff2"))
    with tempfile.TemporaryDirectory() as tmp:
        source = args.source or download_source(pathlib.Path(tmp))
        for out, chars, flavor in jobs:
            count, size = make_subset(source, out, chars, flavor)
            if out.name == DIAGRAM_OUT.name:  # the plugin reads which CJK characters it holds
                held = set(chr(c) for c in font_cmap(out))
                out.with_suffix(".txt").write_text("".join(sorted(c for c in held if CJK.match(c))) + "\n",
                                                   encoding="utf-8")
            print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: "
                  f"{count} characters asked for, {size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
