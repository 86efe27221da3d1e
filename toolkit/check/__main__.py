"""`python -m toolkit.check NOTEBOOK`, `python -m toolkit.check FOLDER` or `python -m toolkit.check --class CLASS_DIR`.

One notebook: runs it, prints the check table and one line per other problem; exits 1 unless every
check passes. A folder: checks every exNN_*.ipynb (or solNN_*.ipynb) in it, two at a time, and prints the
progress table; exits 1 unless every exercise is done. --class: a teacher's report over one folder per
student (see _class.py). Bad usage exits 2. No traceback is ever printed: a problem is one Chinese line.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import BinaryIO, Sequence


def _jobs(value: int | None) -> int:
    return value or min(2, os.cpu_count() or 1)


def _answer_channel() -> tuple[str, BinaryIO]:
    """--json (a class report's checker): the key on stdin, read before any student code runs, then stdin closed;
    the answer goes out on a copy of stdout, and fd 1 becomes stderr, so nothing else can reach the answer."""
    key = sys.stdin.buffer.readline().decode("ascii", "replace").strip()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdin = open(os.devnull, encoding="utf-8")
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return key, answer


def check_notebook(path: Path, args: argparse.Namespace) -> int:
    from ._class import CheckerTampered, _changed, checker_files, sign
    from .notebook import run_notebook

    key, answer = _answer_channel() if args.json else ("", None)
    before = checker_files()
    run = run_notebook(path, time_limit=args.time_limit, cell_timeout=args.cell_timeout)
    changed = _changed(before)
    if changed:
        raise CheckerTampered([path], changed)
    if answer is not None:
        payload = json.dumps(run.to_dict(), ensure_ascii=False).encode("utf-8")
        answer.write(payload + b"\n" + sign(key, payload).encode("ascii") + b"\n")
        answer.flush()
        return 0 if run.report.ok else 1
    from ._core import visible

    advice = f"按提示修改并保存笔记本，再运行 python -m toolkit.check {shlex.quote(str(path))}"
    print("\n".join(visible(line) for line in run.report.render(advice).splitlines()))  # no CR or ESC rewrites a line
    for note in run.notes:
        print(visible(f"⚠ {note}"))
    return 0 if run.report.ok else 1


def check_directory(folder: Path, args: argparse.Namespace) -> int:
    from ._class import STATUS, check_many
    from ._core import _pad, _width, visible
    from .notebook import exercise_notebooks, skipped_copies

    notebooks = exercise_notebooks(folder)
    copies = skipped_copies(sorted(folder.glob("*.ipynb")), notebooks)
    if not notebooks:
        print(f"✘ {folder} 里没有练习（exNN_名称.ipynb）", file=sys.stderr)
        return 2
    runs = check_many(notebooks, jobs=_jobs(args.jobs), time_limit=args.time_limit, cell_timeout=args.cell_timeout)
    rows = []
    for run, _ in runs:
        report = run.report
        status = STATUS[run.status] + (f"（{report.problem}）" if report.problem else "")
        rows.append((run.path.stem, "-" if report.problem else f"{report.passed}/{report.total}", visible(status)))
    width = max(_width(r[0]) for r in rows + [("练习", "", "")])
    print(f"{_pad('练习', width)}  {_pad('通过', 7)}  状态")
    print("─" * (width + 24))
    for stem, score, status in rows:
        print(f"{_pad(stem, width)}  {_pad(score, 7)}  {status}")
    done = sum(run.status == "done" for run, _ in runs)
    print("─" * (width + 24))
    print(f"完成 {done}/{len(rows)} 个练习")
    for note in copies:
        print(visible(f"⚠ {note}"))
    return 0 if done == len(rows) else 1


def _unwritable(target: str | None) -> str:
    """Why a report file cannot be written there ("" when it can), asked before the class is checked."""
    if not target:
        return ""
    parent = Path(target).expanduser().resolve().parent
    if not parent.is_dir():
        return f"目录 {parent} 不存在"
    if not os.access(parent, os.W_OK):
        return f"没有写入 {parent} 的权限"
    return ""


def check_class_folder(folder: Path, args: argparse.Namespace) -> int:
    from ._class import STATUS, check_class
    from ._core import visible

    for option, target in (("--html", args.html), ("--csv", args.csv)):
        why = _unwritable(target)
        if why:
            print(f"✘ {option} {target}：{why}，报告写不进去。换一个路径再运行（还没有开始检查）", file=sys.stderr)
            return 2

    def progress(path: Path, run) -> None:
        print(visible(f"  {STATUS[run.status][:1]} {path.parent.name}/{path.name}"), file=sys.stderr, flush=True)

    report = check_class(folder, jobs=_jobs(args.jobs), progress=progress, time_limit=args.time_limit,
                         cell_timeout=args.cell_timeout)
    if not report.runs:
        print(f"✘ {folder} 里没有学生的文件夹", file=sys.stderr)
        return 2
    print(report.render())
    written = 0
    for target, write in ((args.html, report.to_html), (args.csv, report.to_csv)):
        if not target:
            continue
        try:
            write(Path(target))
        except OSError as exc:
            print(f"✘ 报告没能写入 {target}：{exc.strerror or exc}（这个目录存在吗？有写权限吗？）"
                  "上面的报告是完整的，换一个路径再运行一次即可", file=sys.stderr)
            return 2
        print(f"{'' if written else chr(10)}已写入 {target}")
        written += 1
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with its errors said in Chinese: the usage line, then one line, exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        for english, chinese in (("the following arguments are required: ", "缺少参数："),
                                 ("unrecognized arguments: ", "不认识的参数："), ("argument ", "参数 "),
                                 ("invalid int value: ", "要是整数，得到 "), ("expected one argument", "后面要跟一个值")):
            message = message.replace(english, chinese)
        self.exit(2, f"用法：{self.format_usage().removeprefix('usage: ').strip()}\n✘ {message}\n")


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (a time limit of 0, -1 or nan would fail every check)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"要是秒数（大于 0 的数），得到 {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"要是大于 0 的有限秒数，得到 {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    from ._class import NOTEBOOK_TIMEOUT
    from ._player import AFTER_HANG, TIME_LIMIT
    from .notebook import CELL_TIMEOUT

    parser = _Parser(prog="python -m toolkit.check", description="运行练习 notebook 并检查你写的函数；给一个目录则显示全部练习"
                     f"的进度（目录和 --class 里每个 notebook 一共最多 {NOTEBOOK_TIMEOUT:g} 秒）。")
    parser.add_argument("path", help="练习 notebook（例如 exercises/ex02_smart_truncate.ipynb）或目录（exercises/）")
    parser.add_argument("--class", dest="class_", action="store_true",
                        help="老师用：path 是班级目录，每个学生一个子目录，输出班级报告")
    parser.add_argument("--html", metavar="FILE", help="（--class）把班级报告另存为一个 HTML 页面")
    parser.add_argument("--csv", metavar="FILE", help="（--class）把每个学生每个练习的得分另存为 CSV")
    parser.add_argument("--jobs", type=int, default=None, help="同时检查几个 notebook（默认 2，或 CPU 核数更少时取核数）")
    parser.add_argument("--time-limit", type=_seconds, default=TIME_LIMIT, help=f"每次调用你的函数最多几秒（默认 {TIME_LIMIT:g}；"
                        f"有一项超时后，这个 notebook 余下的每项只等 {AFTER_HANG:g} 秒）")
    parser.add_argument("--cell-timeout", type=_seconds, default=CELL_TIMEOUT,
                        help=f"每个代码单元格最多运行几秒（默认 {CELL_TIMEOUT:g}）")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one notebook's run, for --class
    return parser


def _student(notebook: Path, class_dir: Path | None) -> str:
    """Who a notebook belongs to: its student's folder in a class, else the notebook itself."""
    if class_dir is not None:
        try:
            return notebook.resolve().relative_to(class_dir.resolve()).parts[0]
        except (ValueError, IndexError):
            pass
    return str(notebook)


def main(argv: Sequence[str] | None = None) -> int:
    from ._class import CheckerTampered
    from ._sandbox import harden

    harden()  # this process holds the verdicts: no other process of this user may open its /proc entries
    parser = _parser()
    args = parser.parse_args(argv)
    path = Path(args.path)
    try:
        if args.class_:
            if not path.is_dir():
                print(f"✘ 找不到班级目录 {path}", file=sys.stderr)
                return 2
            return check_class_folder(path, args)
        if path.is_dir():
            return check_directory(path, args)
        if not path.is_file():
            print(f"✘ 找不到 {path}", file=sys.stderr)
            return 2
        return check_notebook(path, args)
    except CheckerTampered as exc:
        files = "、".join(exc.changed[:5]) + (" 等" if len(exc.changed) > 5 else "")
        who = "、".join(_student(p, path if args.class_ else None) for p in exc.paths)
        print(f"✘ 检查 {who} 的时候，检查器自己的文件被改动了：{files}。已停止，结果不可信："
              "请恢复这些文件（例如 git checkout -- toolkit）后重新运行", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("○ 已中断：检查没有做完。", file=sys.stderr)
        return 1
    except Exception as exc:  # the checker's own bug: one line, never a traceback
        print(f"⚠ 检查器自己出错了（不是你的代码的问题）：{type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C during the imports
        print("○ 已中断。", file=sys.stderr)
        sys.exit(1)
