"""The teacher's guide (notebooks/教师指南.md) has a section for every lesson a class works through, in the same
six parts, a minute plan that fits the lesson, and links that lead somewhere."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "notebooks" / "教师指南.md"
PARTS = ["目标", "分钟计划", "现场演示", "提问", "常见错误", "评分"]
# chapters 01-08, 10, 11 and their appendices: the lessons a teacher plans (00 is a primer, 09 the demo page, 12 the
# capstone the guide's general part covers)
TAUGHT = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if re.match(r"(0[1-8]|1[01])[a-z]?_", p.name)]


def _sections() -> dict[str, str]:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.split(r"^### \[[^\]]*\]\(([^)]+\.ipynb)\)\n", text, flags=re.M)
    return {found[i]: re.split(r"^## ", found[i + 1], flags=re.M)[0] for i in range(1, len(found), 2)}


@pytest.mark.parametrize("path", TAUGHT, ids=lambda p: p.stem)
def test_every_lesson_has_its_section_in_six_parts_and_a_plan_of_at_most_45_minutes(path):
    section = _sections().get(path.name)
    assert section, f"教师指南.md has no section for {path.name}"
    assert re.findall(r"^#### (\S+)", section, re.M) == PARTS, f"{path.name}: the parts are {PARTS}, in order"
    plan = section.split("#### 分钟计划", 1)[1].split("####", 1)[0]
    ends = [int(m) for m in re.findall(r"^\| *\d+ *[–-] *(\d+) *\|", plan, re.M)]
    assert ends and ends == sorted(ends) and ends[-1] <= 45, f"{path.name}: minute plan {ends}"


def test_the_guides_links_lead_to_files_that_exist():
    text = GUIDE.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    missing = [t for t in targets if not t.startswith("http") and not (GUIDE.parent / t).exists()]
    assert targets and not missing, missing
