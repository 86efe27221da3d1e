"""Point the notebooks' links into the toolkit's source at the lines that define what they name, again.

A chapter links to the toolkit's lines: [`smart_truncate`](../toolkit/truncate.py#L40-L95). When the source
moves, tests/test_chapters_form.py says which link went stale; this rewrites every such link in notebooks/
that no longer shows the names in its text to their current span (a def or class with its decorators and
body, or an assignment), and prints what it changed. Links whose names it cannot find are left alone and listed.

    python tools/relink.py            # rewrite notebooks/*.ipynb in place
    python tools/relink.py --check    # only list the stale links; exit 1 when there are any
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[([^\]]*)\]\(\.\./(toolkit/[^)#\s]+\.py)#L(\d+)(?:-L(\d+))?\)")


def span(lines: list[str], name: str) -> tuple[int, int] | None:
    """1-based first and last line of the definition of `name` in `lines`, or None."""
    pattern = re.compile(rf"^(\s*)(async def|def|class) {re.escape(name)}\b|^(\s*){re.escape(name)}\s*[:=]")
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if not m:
            continue
        indent = len(m.group(1) if m.group(1) is not None else m.group(3))
        start = i
        while start > 0 and lines[start - 1].strip().startswith("@"):
            start -= 1
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
                                    or lines[end].lstrip().startswith((")", "]", "}"))):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        return start + 1, end
    return None


def relink(text: str, stale: list[str]) -> str:
    def fix(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        names = [n.rsplit(".", 1)[-1] for n in re.findall(r"`([A-Za-z_][A-Za-z_0-9.]*)`", label)]
        source = ROOT / target
        if not names or not source.is_file():
            return m.group(0)
        lines = source.read_text(encoding="utf-8").splitlines()
        first, last = int(m.group(3)), int(m.group(4) or m.group(3))
        shown = "\n".join(lines[first - 1:last])
        if 1 <= first <= last <= len(lines) and all(
                re.search(rf"^\s*(async def|def|class) {re.escape(n)}\b|^\s*{re.escape(n)}\s*[:=]", shown, re.M)
                for n in names):
            return m.group(0)  # still shows what it names (the test's rule): left as its author drew it
        spans = [span(lines, n) for n in names]
        if None in spans:
            stale.append(f"{target}: {', '.join(n for n, s in zip(names, spans) if s is None)} not found")
            return m.group(0)
        first, last = min(s[0] for s in spans), max(s[1] for s in spans)
        new = f"[{label}](../{target}#L{first}-L{last})"
        if new != m.group(0):
            stale.append(f"{target}: {m.group(3)}-{m.group(4) or m.group(3)} → {first}-{last} ({', '.join(names)})")
        return new
    return LINK.sub(fix, text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed = 0
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
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
