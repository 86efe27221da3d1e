"""Point the notebooks' links into the toolkit's source at exactly the lines that define what they name.

A chapter links to the toolkit's lines: [`smart_truncate`](../toolkit/truncate.py#L40-L95). Such a link is
precise when its range is exactly the definition of the names in its label (a def or class from its first
decorator to its last line, or an assignment with its continuation lines; several names: from the first one's
first line to the last one's last line). A label can also state a sub-range of one definition: the name, then
one or two code fragments (backticked text that is not a plain name), e.g.

    [`_parse_text` 里分预算的 `marker_room = 40` 到 `tail = `](../toolkit/fitting.py#L133-L135)

spans from the first line of the definition that contains the first fragment to the first line after it that
contains the last one (one fragment: that one line). A dotted name (`ToolExecutor.execute`) is looked up inside
its class. tests/test_chapters_form.py fails on any imprecise link; this rewrites them all, in every notebook
in notebooks/, and prints what it changed. Links whose names or fragments it cannot find are left alone and
listed.

    python tools/relink.py                           # rewrite notebooks/*.ipynb in place
    python tools/relink.py --check                   # only list the imprecise links; exit 1 when there are any
    python tools/relink.py notebooks/03_retry.ipynb  # only these notebooks
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[([^\]]*)\]\(\.\./(toolkit/[^)#\s]+\.py)(?:#L(\d+)(?:-L(\d+))?)?\)")
CODE = re.compile(r"`([^`]+)`")
NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], i: int) -> int:
    """0-based index after the last line of the statement or block that starts at line i."""
    indent = _indent(lines[i])
    end = i + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent
                                or (_indent(lines[end]) == indent and lines[end].lstrip().startswith((")", "]", "}")))):
        end += 1
    while end > i + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _find(lines: list[str], name: str, lo: int, hi: int) -> int | None:
    """0-based line of the definition of the plain `name` between lines lo and hi: the least indented one,
    a def or class before an assignment."""
    define = re.compile(rf"^(\s*)(?:async\s+def|def|class)\s+{re.escape(name)}\b")
    assign = re.compile(rf"^(\s*){re.escape(name)}\s*(?::|=(?!=))")
    found = []
    for i in range(lo, hi):
        for rank, pattern in enumerate((define, assign)):
            m = pattern.match(lines[i])
            if m:
                found.append((len(m.group(1)), rank, i))
    return min(found)[2] if found else None


def span(lines: list[str], name: str) -> tuple[int, int] | None:
    """1-based first and last line of the definition of `name` (dotted: inside its class) in `lines`, or None.
    A def or class starts at its first decorator."""
    lo, hi, i = 0, len(lines), None
    for part in name.split("."):
        i = _find(lines, part, lo, hi)
        if i is None:
            return None
        lo, hi = i + 1, _block_end(lines, i)
    start = i
    while start > 0 and lines[start - 1].strip().startswith("@") and _indent(lines[start - 1]) == _indent(lines[i]):
        start -= 1
    return start + 1, _block_end(lines, i)


def label_parts(label: str) -> tuple[list[str], list[str]]:
    """(the names a link's label names, the code fragments it quotes) in the order they appear."""
    names, fragments = [], []
    for text in CODE.findall(label):
        (names if NAME.fullmatch(text) else fragments).append(text)
    return names, fragments


def expected_range(lines: list[str], label: str) -> tuple[tuple[int, int] | None, str]:
    """(the exact 1-based range a link with this label must have, or None; why not, when None).

    (None, "") for a label that names nothing: a link to a file or lines the test cannot judge."""
    names, fragments = label_parts(label)
    if not names:
        return None, ""
    spans = [span(lines, n) for n in names]
    missing = [n for n, s in zip(names, spans) if s is None]
    if missing:
        return None, f"{', '.join(missing)} not found"
    if not fragments:
        return (min(s[0] for s in spans), max(s[1] for s in spans)), ""
    if len(names) != 1 or len(fragments) > 2:
        return None, f"a sub-range names one definition and one or two fragments: {label!r}"
    first, last = spans[0]
    body = range(first - 1, last)
    start = next((i for i in body if fragments[0] in lines[i]), None)
    if start is None:
        return None, f"{fragments[0]!r} not found in {names[0]}"
    end = next((i for i in range(start, last) if fragments[-1] in lines[i]), None)
    if end is None:
        return None, f"{fragments[-1]!r} not found in {names[0]} after {fragments[0]!r}"
    return (start + 1, end + 1), ""


def relink(text: str, stale: list[str]) -> str:
    """`text` with every link into toolkit/ made precise; what changed, or could not be fixed, goes to `stale`."""
    def fix(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        source = ROOT / target
        if not source.is_file():
            stale.append(f"{target}: no such file")
            return m.group(0)
        want, why = expected_range(source.read_text(encoding="utf-8").splitlines(), label)
        if want is None:
            if why:
                stale.append(f"{target}: {why}")
            return m.group(0)
        new = f"[{label}](../{target}#L{want[0]}-L{want[1]})"
        if new != m.group(0):
            old = f"{m.group(3)}-{m.group(4) or m.group(3)}" if m.group(3) else "no lines"
            stale.append(f"{target}: {old} → {want[0]}-{want[1]} ({', '.join(label_parts(label)[0])})")
        return new
    return LINK.sub(fix, text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    given = [Path(a).resolve() for a in argv if not a.startswith("--")]
    changed = 0
    for path in given or sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        stale: list[str] = []
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                cell["source"] = relink("".join(cell["source"]), stale).splitlines(True)
        for line in stale:
            print(f"{path.name}: {line}")
        if stale and not check:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        changed += len(stale)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
