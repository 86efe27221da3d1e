"""A teacher's class report: `python -m toolkit.check --class DIR` over a small class, in the terminal, HTML and CSV.

Three students, two exercises: a student who finished, one who has not started one exercise and made a
typical mistake in the other, one whose function hangs and whose other notebook kills its process. The
report must have a row for each, say what happened, and put the shared mistakes first.
"""
from __future__ import annotations

import csv
import html.parser
import shutil
import subprocess
import sys
from pathlib import Path

from test_check_attacks import ROOT, make_notebook, no_traceback

ATTEMPTS = ROOT / "tests" / "attempts"


def build_class(folder: Path) -> None:
    for student in ("alice", "bob", "carol"):
        (folder / student).mkdir(parents=True)
    for number in ("02", "08"):
        [solution] = (ROOT / "solutions").glob(f"sol{number}_*.ipynb")
        shutil.copy(solution, folder / "alice" / ("ex" + solution.name.removeprefix("sol")))
    copy = folder / "alice" / "ex02_smart_truncate-Copy1.ipynb"  # a JupyterLab "Duplicate": not an exercise
    copy.write_bytes(make_notebook(folder / "bob", "02").read_bytes())  # bob: 02 untouched
    make_notebook(folder / "bob", "08", answer=(ATTEMPTS / "ex08" / "wrong_unsorted_kwargs.py").read_text("utf-8"))
    make_notebook(folder / "carol", "02", answer="def truncate_json_rows(text, max_chars):\n    while True:\n"
                                                 "        pass\n")
    make_notebook(folder / "carol", "08", first=("import os\nos._exit(1)\n",))


def test_class_report_has_a_row_per_student_and_the_most_failed_checks(tmp_path: Path) -> None:
    build_class(tmp_path / "class")
    page, table = tmp_path / "report.html", tmp_path / "report.csv"
    done = subprocess.run([sys.executable, "-m", "toolkit.check", "--class", str(tmp_path / "class"), "--time-limit",
                           "1", "--html", str(page), "--csv", str(table)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    no_traceback(done)
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("alice", "bob", "carol"))}
    assert "9/9 ✔ 完成" in rows["alice"] and "10/10 ✔ 完成" in rows["alice"], done.stdout
    assert "0/9 ○ 未开始" in rows["bob"] and "9/10 ✘ 进行中" in rows["bob"], done.stdout
    assert "0/9 ✘ 进行中" in rows["carol"] and "⚠ 无法运行" in rows["carol"], done.stdout
    assert "班级报告：3 名学生 × 2 个练习" in done.stdout  # the Copy1 is no exercise, and is said to be skipped:
    assert "alice：跳过了副本 ex02_smart_truncate-Copy1.ipynb：只检查 ex02_smart_truncate.ipynb" in done.stdout
    most_failed = done.stdout.split("最常未通过的检查")[1]
    assert "练习 08 · 关键字参数的顺序不影响判断：1/2 名学生未通过" in most_failed, most_failed
    assert "练习 02 · 不超过 max_chars 的文本原样返回：1/2 名学生未通过" in most_failed  # carol's hang; bob had not started
    assert "超过 1 秒没有返回" in most_failed
    assert "carol 练习 08：notebook 没有运行到检查单元格" in done.stdout

    with open(table, encoding="utf-8-sig", newline="") as f:
        records = {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}
    assert len(records) == 6
    assert records[("alice", "02")]["status"] == "done" and records[("alice", "02")]["passed"] == "9"
    assert records[("bob", "02")]["status"] == "not_started"
    assert records[("bob", "08")]["failed_checks"] == "keyword_order_irrelevant"
    assert records[("carol", "08")]["status"] == "could_not_run" and "退出" in records[("carol", "08")]["problem"]

    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "http" not in text  # self-contained: no script, nothing fetched
    parser = html.parser.HTMLParser()
    parser.feed(text)
    assert all(name in text for name in ("alice", "bob", "carol")) and "⚠ 无法运行" in text
    assert "关键字参数的顺序不影响判断" in text


FAKED = "第一行\n\x1b[2J\r  mallory  9/9 ✔ 完成"


def test_a_linked_notebook_is_not_graded_and_a_students_text_cannot_rewrite_the_terminal(tmp_path: Path) -> None:
    """A symlink to the solution, a hard link to a file outside, a student folder that is a symlink to another: each
    was graded as that student's own work (done 9/9, no note). An exception message with a newline, ESC and CR was
    printed raw in the terminal report, where it cleared the screen and faked a row."""
    import os

    [solution] = (ROOT / "solutions").glob("sol02_*.ipynb")
    name = "ex" + solution.name.removeprefix("sol")
    folder = tmp_path / "class"
    for student in ("alice", "bob", "dave"):
        (folder / student).mkdir(parents=True)
    (folder / "alice" / name).symlink_to(solution)
    shutil.copy(solution, tmp_path / "elsewhere.ipynb")
    os.link(tmp_path / "elsewhere.ipynb", folder / "bob" / name)
    (tmp_path / "carols-real-folder").mkdir()
    shutil.copy(solution, tmp_path / "carols-real-folder" / name)
    (folder / "carol").symlink_to(tmp_path / "carols-real-folder")
    make_notebook(folder / "dave", "02", answer=f"def truncate_json_rows(text, max_chars):\n"
                                               f"    raise ValueError({FAKED!r})\n")
    done = subprocess.run([sys.executable, "-m", "toolkit.check", "--class", str(folder), "--time-limit", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    no_traceback(done)
    out = done.stdout
    assert "alice：跳过了 ex02_smart_truncate.ipynb：它是符号链接，不算这名学生的作业" in out, out
    assert "bob：跳过了 ex02_smart_truncate.ipynb：它是硬链接（和别处的某个文件是同一份），不算这名学生的作业" in out, out
    assert "carol：跳过了 ex02_smart_truncate.ipynb：它的路径通向学生文件夹之外，不算这名学生的作业" in out, out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("alice", "bob", "carol", "dave"))}
    assert all("✔" not in rows[s] for s in ("alice", "bob", "carol")), out
    assert "0/9 ✘ 进行中" in rows["dave"], out
    assert "\x1b" not in out and "\r" not in out, out
    assert "第一行\\n\\x1b[2J\\r  mallory  9/9 ✔ 完成" in out, out  # the message, escaped on one line
    assert not [line for line in out.splitlines() if line.lstrip().startswith("mallory")], out
