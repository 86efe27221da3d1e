"""How long a lesson notebook takes: a reading-and-doing estimate, in minutes.

    estimate = Chinese characters in markdown cells / 100 + code lines / 8

where a code line is a non-blank line of a code cell that is not only a comment. The rates are
a student's: about 100 characters of Chinese prose and 8 lines of code (read, run, looked at)
a minute, calibrated on a reviewer's minutes through the chapters. A lesson (a chapter or an
appendix) fits 45 minutes of class when its estimate is at most 50; tests/test_chapters_form.py
holds every lesson to that, and the minutes its first cell states to within 10 of it.

    python tools/lesson_time.py            # every notebook in notebooks/, a line each
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHINESE = re.compile(r"[\u4e00-\u9fff]")
LIMIT = 50


def estimate(path: Path) -> float:
    """Minutes a student needs for the notebook at `path` (see the module's docstring)."""
    chinese = code = 0
    for cell in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            chinese += len(CHINESE.findall(source))
        elif cell["cell_type"] == "code":
            code += sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))
    return chinese / 100 + code / 8


def main() -> int:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        minutes = estimate(path)
        print(f"{path.name:40s} {minutes:5.1f}{'  over ' + str(LIMIT) if minutes > LIMIT else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
