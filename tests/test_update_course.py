"""A student who ran the course's notebooks gets its updates with `python tools/update_course.py`, where a plain
`git pull` stops: real git repositories in tmp (the course, and a student's clone changed as JupyterLab saves
it), the course commits, then the documented command."""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"chart-0" * 20).decode()
STUB = 'def add(a, b):\n    raise NotImplementedError("还没有实现")'
ANSWER = "def add(a, b):\n    return a + b  # 我的答案"


@pytest.fixture
def env(tmp_path):
    """git with a known identity and no user or system config."""
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "课程",
            "GIT_AUTHOR_EMAIL": "course@example.invalid", "GIT_COMMITTER_NAME": "课程",
            "GIT_COMMITTER_EMAIL": "course@example.invalid"}


def run(args, cwd: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = list(cells)
    return nb


def chapter(intro: str, printed: str) -> nbformat.NotebookNode:
    """A chapter as the course stores it: executed, with a stream and a PNG output."""
    shown = nbformat.v4.new_code_cell("print('第一行')\nprint('第二行')", id="c1", execution_count=1,
                                      outputs=[nbformat.v4.new_output("stream", name="stdout", text=printed)])
    chart = nbformat.v4.new_code_cell("draw()", id="c2", execution_count=2, outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})])
    return notebook(nbformat.v4.new_markdown_cell(intro, id="intro"), shown, chart)


def exercise(title: str, stub: str, check: str) -> nbformat.NotebookNode:
    return notebook(nbformat.v4.new_markdown_cell(title, id="title"), nbformat.v4.new_code_cell(stub, id="solution"),
                    nbformat.v4.new_code_cell(check, id="check"))


def write(repo: Path, name: str, nb) -> None:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, repo / name)  # what Jupyter's contents manager writes when JupyterLab saves


@pytest.fixture
def course(tmp_path, env):
    """The course (as its maintainers commit it) and a student's clone of it; yields (course, student)."""
    course = tmp_path / "course"
    (course / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "update_course.py", course / "tools" / "update_course.py")
    shutil.copy(ROOT / ".gitignore", course / ".gitignore")
    write(course, "notebooks/01_demo.ipynb", chapter("# 第 1 章", "第一行\n第二行\n"))
    write(course, "exercises/ex01_demo.ipynb", exercise("# 练习 01", STUB, "check(add)"))
    run(["git", "init", "-q", "-b", "main"], course, env)
    run(["git", "add", "-A"], course, env)
    run(["git", "commit", "-q", "-m", "课程"], course, env)
    student = tmp_path / "student"
    run(["git", "clone", "-q", str(course), str(student)], tmp_path, env)
    return course, student


def student_works(student: Path) -> dict[str, bytes]:
    """The student runs chapter 01 (JupyterLab re-splits the stream, redraws the PNG, stores widget state and new
    counts), answers exercise 01 and runs its check, and keeps a copy of their own. Returns their files' bytes."""
    nb = nbformat.read(student / "notebooks/01_demo.ipynb", as_version=4)
    nb.cells[1].execution_count, nb.cells[2].execution_count = 7, 8
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="第一行\n"),
                           nbformat.v4.new_output("stream", name="stdout", text="第二行\n")]
    nb.cells[2].outputs[0]["data"]["image/png"] = base64.b64encode(b"\x89PNG\r\n\x1a\nchart-1").decode()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    write(student, "notebooks/01_demo.ipynb", nb)
    ex = nbformat.read(student / "exercises/ex01_demo.ipynb", as_version=4)
    ex.cells[1].source = ANSWER
    ex.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="✔ 通过 3/3\n")]
    ex.cells.insert(2, nbformat.v4.new_code_cell("add(1, 2)  # 我自己试的", id="my-try"))
    write(student, "exercises/ex01_demo.ipynb", ex)
    write(student, "exercises/ex01_demo-Copy1.ipynb", ex)
    return {name: (student / name).read_bytes() for name in
            ("notebooks/01_demo.ipynb", "exercises/ex01_demo.ipynb", "exercises/ex01_demo-Copy1.ipynb")}


def course_updates(course: Path, env: dict, stub: str = STUB) -> None:
    """The maintainers change chapter 01 (text and outputs) and exercise 01 (its title and check), add chapter 02."""
    write(course, "notebooks/01_demo.ipynb", chapter("# 第 1 章（修订）", "第一行\n第二行（新）\n"))
    write(course, "exercises/ex01_demo.ipynb", exercise("# 练习 01（修订）", stub, "check(add, strict=True)"))
    write(course, "notebooks/02_new.ipynb", chapter("# 第 2 章", "新\n"))
    run(["git", "add", "-A"], course, env)
    run(["git", "commit", "-q", "-m", "课程更新"], course, env)


def update(student: Path, env: dict) -> subprocess.CompletedProcess:
    return run([sys.executable, "tools/update_course.py"], student, env, check=False)


def sources(path: Path) -> dict[str, str]:
    return {cell.id: cell.source for cell in nbformat.read(path, as_version=4).cells}


def test_a_student_who_ran_the_notebooks_gets_the_update_and_keeps_the_answers(course, env):
    course, student = course
    before = student_works(student)
    (student / "notebooks/02_new.ipynb").write_text("我自己的第 2 章笔记", encoding="utf-8")  # the course adds one
    before["notebooks/02_new.ipynb"] = (student / "notebooks/02_new.ipynb").read_bytes()
    course_updates(course, env)

    pulled = run(["git", "-c", "pull.rebase=false", "pull"], student, env, check=False)
    assert pulled.returncode != 0 and "would be overwritten" in pulled.stderr  # the problem this solves

    done = update(student, env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert run(["git", "rev-parse", "HEAD"], student, env).stdout == run(["git", "rev-parse", "HEAD"], course, env).stdout
    # the chapter the student only ran is exactly the course's new version; the new chapter arrived
    for name in ("notebooks/01_demo.ipynb", "notebooks/02_new.ipynb"):
        assert (student / name).read_bytes() == (course / name).read_bytes(), name
    # the exercise: the student's answer and their own cell kept, everything else the course's new version
    merged = nbformat.read(student / "exercises/ex01_demo.ipynb", as_version=4)
    nbformat.validate(merged)
    assert [c.id for c in merged.cells] == ["title", "solution", "my-try", "check"]
    assert sources(student / "exercises/ex01_demo.ipynb") == {
        "title": "# 练习 01（修订）", "solution": ANSWER, "my-try": "add(1, 2)  # 我自己试的",
        "check": "check(add, strict=True)"}
    # nothing lost: both files the update touched are in backups/ exactly as the student left them
    backups = list((student / "backups").iterdir())
    assert len(backups) == 1
    for name in ("notebooks/01_demo.ipynb", "exercises/ex01_demo.ipynb", "notebooks/02_new.ipynb"):
        assert (backups[0] / name).read_bytes() == before[name], name
    assert (student / "exercises/ex01_demo-Copy1.ipynb").read_bytes() == before["exercises/ex01_demo-Copy1.ipynb"]
    # git sees only the student's work: the merged exercise and their copy (backups/ is ignored)
    status = run(["git", "status", "--porcelain", "--untracked-files=all"], student, env).stdout.splitlines()
    assert sorted(status) == [" M exercises/ex01_demo.ipynb", "?? exercises/ex01_demo-Copy1.ipynb"]
    assert "✔ exercises/ex01_demo.ipynb" in done.stdout and "○ notebooks/01_demo.ipynb" in done.stdout
    assert "backups/" in done.stdout

    again = update(student, env)  # nothing new: says so, changes nothing
    assert again.returncode == 0 and "已经是最新" in again.stdout
    assert len(list((student / "backups").iterdir())) == 1


def test_a_cell_both_changed_keeps_the_students_version_with_the_courses_below_it(course, env):
    course, student = course
    student_works(student)
    new_stub = 'def add(a: int, b: int) -> int:\n    raise NotImplementedError("还没有实现")'
    course_updates(course, env, stub=new_stub)

    done = update(student, env)
    assert done.returncode == 0, done.stderr
    cells = nbformat.read(student / "exercises/ex01_demo.ipynb", as_version=4).cells
    assert [c.id for c in cells] == ["title", "solution", "solution-course-update", "my-try", "check"]
    assert cells[1].source == ANSWER
    assert cells[2].cell_type == "markdown" and new_stub in cells[2].source
    assert "⚠ exercises/ex01_demo.ipynb" in done.stdout and "solution" in done.stdout

    # the course changes that cell once more: a second note, every cell id still unique, a valid notebook
    write(course, "exercises/ex01_demo.ipynb", exercise("# 练习 01（修订）", new_stub + "  # v3", "check(add, strict=True)"))
    run(["git", "commit", "-q", "-am", "再次更新"], course, env)
    assert update(student, env).returncode == 0
    merged = nbformat.read(student / "exercises/ex01_demo.ipynb", as_version=4)
    nbformat.validate(merged)
    ids = [c.id for c in merged.cells]
    assert len(ids) == len(set(ids)) and ids.count("solution") == 1 and len(ids) == 6, ids
    assert merged.cells[1].source == ANSWER


def test_a_student_with_commits_of_their_own_is_told_and_nothing_changes(course, env):
    course, student = course
    student_works(student)
    run(["git", "commit", "-q", "-am", "我的答案"], student, env)
    head = run(["git", "rev-parse", "HEAD"], student, env).stdout
    answered = (student / "exercises/ex01_demo.ipynb").read_bytes()
    course_updates(course, env)

    done = update(student, env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "git pull" in done.stderr and "1 次" in done.stderr
    assert run(["git", "rev-parse", "HEAD"], student, env).stdout == head
    assert (student / "exercises/ex01_demo.ipynb").read_bytes() == answered
    assert not (student / "backups").exists()


def test_outside_a_clone_it_says_what_to_do(tmp_path, env):
    lone = tmp_path / "lone"
    (lone / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "update_course.py", lone / "tools" / "update_course.py")
    done = update(lone, env)
    assert done.returncode == 1 and "不是 git 仓库" in done.stderr and "Traceback" not in done.stderr
    run(["git", "init", "-q"], lone, env)
    done = update(lone, env)
    assert done.returncode == 1 and "没有对应的远程分支" in done.stderr and "Traceback" not in done.stderr
