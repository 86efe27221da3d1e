"""The README's promises a student can check by hand: the snippet prints what the README says it prints."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_the_readme_snippet_prints_what_the_readme_shows():
    snippet = next(b for b in _blocks("python") if "asyncio.run(main())" in b)
    shown = README.split(snippet + "```", 1)[1]
    expected = re.search(r"```\n(.*?)```", shown, flags=re.S).group(1)
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, cwd=ROOT,
                         timeout=60, encoding="utf-8")
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected


def test_quick_start_is_two_commands_that_open_chapter_00_with_the_whole_project():
    quick = README.split("## Quick start", 1)[1].split("## ", 1)[0]
    commands = [line for line in _blocks("bash")[0].splitlines() if line.strip()]
    assert commands == ["python -m pip install -r requirements.txt && jupyter lab --ServerApp.root_dir=. notebooks/00_overview.ipynb",
                        "python -m pytest"]
    assert "fonts-noto-cjk" in quick and "--allow-root" in quick


def test_quick_start_says_what_a_new_user_meets():
    """JupyterLab holds its terminal, the tests' duration, the headless URL, the way back to English, updates."""
    quick = README.split("## Quick start", 1)[1].split("## ", 1)[0]
    assert "another\nterminal" in quick.replace("**", "") or "another terminal" in quick.replace("**", "")
    assert "另一个终端" in quick
    assert re.search(r"takes about \d+ minutes", quick) and re.search(r"约 ?\d+ ?分钟", quick)
    # tests/test_quickstart.py opens this address; tests/test_browser.py clicks this menu path
    assert "`/lab?token=…`" in quick and "`/lab/tree/notebooks/00_overview.ipynb?token=…`" in quick
    assert "设置 → 语言 → English - English → 更改并重新加载" in quick
    assert "`python tools/update_course.py`" in quick and (ROOT / "tools" / "update_course.py").is_file()


def test_the_syllabus_links_every_chapter_and_exercise_that_exists():
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert f"(notebooks/{notebook.name})" in README, notebook.name
    for exercise in sorted((ROOT / "exercises").glob("ex[0-9][0-9]_*.ipynb")):
        assert f"(exercises/{exercise.name})" in README, exercise.name
