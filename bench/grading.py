"""Row 9: grading. `check(fn)` as a student presses it, and a teacher's class report over a generated class.

Latency: each exercise's solution function (its notebook's cells run in a module namespace, as a
kernel holds it) checked with `toolkit.check.check`, output captured. The first press in a process
starts the referee process (measured once, cold); then each exercise is pressed in rounds, rotating
(median per exercise), each press one second after the last, as a student reads the table before
pressing again (the referee starts the next worker in that second). Back-to-back presses, which
wait for that worker, are measured too. The check runs in the referee and a worker; a press
includes pickling the function, the round trips and the table. Wrong answers are pressed as well
(two wrong attempts per exercise from tests/attempts, one of them a do-nothing answer where there is
one): a failing property check shrinks its example through round trips to the worker, so they are
slower than right answers, and they are what a student presses most.

Class: 30 students × every exercise (quick: 3 students) generated in a temporary folder, each notebook one of
three kinds in turn: the solution, the untouched exercise, or the exercise with a wrong attempt from
tests/attempts in its answer cell. `check_many` runs them two at a time, as `--class` does: wall time
for the class, and the median seconds per notebook (its own `python -m toolkit.check` process:
cells, checks and process start-up).
"""
from __future__ import annotations

import contextlib
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

import nbformat

from ._stats import line, rotation, row, summarize, target

KEY = "grading"
TITLE = "批改：check(fn) 的延迟与 30 人班级报告"
EN = "Grading: check(fn) latency and a 30-student class report"

ROOT = Path(__file__).resolve().parent.parent
STUB = 'raise NotImplementedError("还没有实现")'


def _solution_object(number: str):
    from toolkit.check import get_exercise

    [path] = (ROOT / "solutions").glob(f"sol{number}_*.ipynb")
    namespace: dict = {"__name__": f"bench_{path.stem}"}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        if cell.source.strip().startswith("check("):
            break
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, str(path), "exec"), namespace)
    return namespace[get_exercise(number).function]


def _press(obj, passes: bool = True) -> float:
    from toolkit.check import check

    out = io.StringIO()
    began = time.perf_counter()
    with contextlib.redirect_stdout(out):
        check(obj)
    seconds = time.perf_counter() - began
    if ("全部通过" in out.getvalue()) != passes:
        raise RuntimeError(f"a {'solution' if passes else 'wrong attempt'} was judged otherwise: "
                           f"{out.getvalue()[-300:]}")
    return seconds


def _wrong_objects(number: str) -> list:
    """Two wrong attempts of the exercise, a do-nothing one first where there is one."""
    from toolkit.check import get_exercise

    files = sorted((ROOT / "tests" / "attempts" / f"ex{number}").glob("wrong_*.py"),
                   key=lambda p: (not p.stem.startswith("wrong_does_nothing"), p.name))
    objects = []
    for path in files[:2]:
        namespace: dict = {"__name__": f"bench_{path.stem}"}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
        objects.append(namespace[get_exercise(number).function])
    return objects


def _class(folder: Path, students: int) -> list[Path]:
    """A generated class: notebook k of student s is a solution, untouched, or a wrong attempt, in turn."""
    from toolkit.check import EXERCISE_NUMBERS

    paths = []
    for s in range(students):
        mine = folder / f"student{s:02d}"
        mine.mkdir(parents=True)
        for k, number in enumerate(EXERCISE_NUMBERS):
            [source] = (ROOT / "exercises").glob(f"ex{number}_*.ipynb")
            nb = nbformat.read(source, as_version=4)
            kind = (s + k) % 3
            if kind == 0:
                [solution] = (ROOT / "solutions").glob(f"sol{number}_*.ipynb")
                nb = nbformat.read(solution, as_version=4)
            elif kind == 2:
                wrong = sorted((ROOT / "tests" / "attempts" / f"ex{number}").glob("wrong_*.py"))
                [answer] = [c for c in nb.cells if c.cell_type == "code" and STUB in c.source]
                answer.source = wrong[s % len(wrong)].read_text(encoding="utf-8")
            nbformat.write(nb, mine / source.name)
            paths.append(mine / source.name)
    return paths


def run(quick: bool = False) -> dict:
    """Measure row 9; returns the row dict (see _stats.row)."""
    from toolkit.check import EXERCISE_NUMBERS
    from toolkit.check._class import check_many

    from toolkit.check._sandbox import problem

    objects = {n: _solution_object(n) for n in EXERCISE_NUMBERS}
    wrong = {n: _wrong_objects(n) for n in EXERCISE_NUMBERS}
    cold = _press(objects["01"])  # starts this process's referee
    rounds = 2 if quick else 5
    presses: dict[str, list[float]] = {n: [] for n in EXERCISE_NUMBERS}
    wrong_presses: dict[str, list[float]] = {n: [] for n in EXERCISE_NUMBERS}
    back_to_back: list[float] = []
    for r in range(rounds):
        order = rotation(EXERCISE_NUMBERS, r)
        for number in order:
            time.sleep(1.0)
            presses[number].append(_press(objects[number]))
            back_to_back.append(_press(objects[number]))
            for obj in wrong[number]:
                time.sleep(1.0)
                wrong_presses[number].append(_press(obj, passes=False))
    students = 3 if quick else 30
    jobs = min(2, os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        paths = _class(Path(tmp), students)
        began = time.perf_counter()
        runs = check_many(paths, jobs=jobs)
        wall = time.perf_counter() - began
    per_notebook = summarize([seconds for _, seconds in runs])
    statuses = [run.status for run, _ in runs]
    lines = [line("首次 check(fn)（启动裁判进程）", "first check(fn) (starts the referee)", cold * 1000, "ms")]
    for number in EXERCISE_NUMBERS:
        s = summarize(presses[number])
        lines.append(line(f"  练习 {number} 的 check(fn)", f"  exercise {number} check(fn)", s["median"] * 1000, "ms",
                          s["spread"]))
    for number in EXERCISE_NUMBERS:
        s = summarize(wrong_presses[number])
        lines.append(line(f"  练习 {number} 错误答案的 check(fn)", f"  exercise {number} check(fn), wrong answers",
                          s["median"] * 1000, "ms", s["spread"]))
    pressed = summarize(back_to_back)
    lines.append(line("  连按两次的第二次（所有练习）", "  second of two back-to-back presses (all exercises)",
                      pressed["median"] * 1000, "ms", pressed["spread"]))
    count = len(EXERCISE_NUMBERS)
    lines += [line(f"班级 {students} 人 × {count} 个练习（{jobs} 个并行）", f"class of {students} × {count} ({jobs} jobs)",
                   wall, "s"),
              line("  每个 notebook 的中位数", "  per notebook, median", per_notebook["median"], "s",
                   per_notebook["spread"])]
    slowest = max(statistics.median(v) for v in presses.values())
    slowest_wrong = max(statistics.median(v) for v in wrong_presses.values())
    targets = [target("最慢练习的 check(fn) ≤ 1 s", "slowest exercise's check(fn) <= 1 s", slowest, "<=", 1.0, "s"),
               target("最慢练习的错误答案 check(fn) ≤ 3 s", "slowest exercise's check(fn) on a wrong answer <= 3 s",
                      slowest_wrong, "<=", 3.0, "s")]
    isolation = problem()
    note = (f"{rounds} 轮，练习轮流按；班级中 {statuses.count('done')} 个完成、{statuses.count('not_started')} 个未开始、"
            f"{statuses.count('in_progress')} 个进行中、{statuses.count('could_not_run')} 个无法运行、"
            f"{statuses.count('unverified')} 个无法验证；学生代码"
            + (f"没有隔离（{isolation}）" if isolation else "在自己的命名空间里运行（只读文件、私有 tmp、无网络）"))
    data = {"cold_s": cold, "presses_s": {n: summarize(v) for n, v in presses.items()},
            "wrong_presses_s": {n: summarize(v) for n, v in wrong_presses.items()}, "isolation_problem": isolation,
            "back_to_back_s": pressed, "class_wall_s": wall,
            "per_notebook_s": per_notebook, "students": students, "jobs": jobs,
            "statuses": {k: statuses.count(k) for k in set(statuses)}}
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note, data=data)
