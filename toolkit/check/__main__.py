"""`python -m toolkit.check exercises/ex02_smart_truncate.ipynb` or `python -m toolkit.check exercises/`.

One notebook: executes it, prints the check table, exits 1 when a check fails.
A directory: runs every exNN_*.ipynb (or solNN_*.ipynb) in it and prints the progress table; exits 1
unless every exercise passes. Bad usage exits 2. No traceback is ever printed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from ._core import _pad, _width


def _notes(run) -> list[str]:
    return [f"  注意：第 {n} 个代码单元格运行出错（{text}）" for n, text in run.cell_errors]


def check_notebook(path: Path) -> int:
    from .notebook import exercise_notebooks, run_notebook

    run = run_notebook(path)
    print(run.report.render())
    for line in _notes(run):
        print(line)
    return 0 if run.report.ok else 1


def _status(passed: int, total: int) -> str:
    if total and passed == total:
        return "✅ 完成"
    return "🟡 进行中" if passed else "⬜ 未开始"


def check_directory(folder: Path) -> int:
    from .notebook import exercise_notebooks, run_notebook

    notebooks = exercise_notebooks(folder)
    if not notebooks:
        print(f"❌ {folder} 里没有练习（exNN_名称.ipynb）", file=sys.stderr)
        return 2
    rows = []
    for path in notebooks:
        try:
            report = run_notebook(path).report
            rows.append((path.stem, f"{report.passed}/{report.total}", _status(report.passed, report.total)))
        except Exception as exc:  # a notebook that cannot run is one row, not a crash
            rows.append((path.stem, "-", f"⚠️ 无法运行（{type(exc).__name__}）"))
    width = max(_width(r[0]) for r in rows + [("练习", "", "")])
    print(f"{_pad('练习', width)}  {_pad('通过', 7)}  状态")
    print("─" * (width + 20))
    for stem, score, status in rows:
        print(f"{_pad(stem, width)}  {_pad(score, 7)}  {status}")
    done = sum(1 for r in rows if r[2].startswith("✅"))
    print("─" * (width + 20))
    print(f"完成 {done}/{len(rows)} 个练习")
    return 0 if done == len(rows) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.check",
                                     description="运行练习 notebook 并检查你写的函数；给一个目录则显示全部练习的进度。")
    parser.add_argument("path", help="练习 notebook（例如 exercises/ex02_smart_truncate.ipynb）或目录（exercises/）")
    args = parser.parse_args(argv)
    path = Path(args.path)
    try:
        if path.is_dir():
            return check_directory(path)
        if not path.is_file():
            print(f"❌ 找不到 {path}", file=sys.stderr)
            return 2
        return check_notebook(path)
    except ValueError as exc:
        print(f"❌ {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("已中断。", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
