"""Make exercises/ from solutions/: one source for both (nbgrader's markers); and an nbgrader course on request.

    python -m toolkit.check.build                  # write exercises/exNN_*.ipynb from solutions/solNN_*.ipynb
    python -m toolkit.check.build --check          # exit 1 if the committed exercises differ from what it makes
    python -m toolkit.check.build --nbgrader DIR   # also write an nbgrader course: DIR/source/exNN_stem/exNN_stem.ipynb

In a solution notebook, code between the lines `### BEGIN SOLUTION` and
`### END SOLUTION` is replaced in the exercise by `raise NotImplementedError`
at the same indentation. Cells tagged "solution" (the answer's notes, the
banner) are left out. Every output and execution count is cleared and cell
metadata keeps only its tags; hint cells and everything else stay as they are.

The nbgrader course is the same notebook with nbgrader's metadata: the answer
cell is a solution cell (nbgrader clears it to the exercise's own stub, see the
nbgrader_config.py written beside it), every other cell is locked, and after
the check cell comes one graded test cell per check, worth one point, that runs
`toolkit.check.grade(fn, "check_id")`: it passes or raises, so autograde gives
partial credit check by check. Students do not need nbgrader.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Sequence

import nbformat

from ..tools._files import course_dir

ROOT = course_dir()  # solutions/ and exercises/: the checkout, or for an installed toolkit the course folder
BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STUB = ["{indent}# 在这里写你的代码（YOUR CODE HERE）", '{indent}raise NotImplementedError("还没有实现")']
SOLUTION_TAG = "solution"


def strip_solution(source: str) -> str:
    """The source with every BEGIN/END SOLUTION region replaced by a stub; ValueError if unbalanced."""
    out: list[str] = []
    inside = False
    for number, line in enumerate(source.splitlines(), 1):
        begin = BEGIN.match(line)
        if begin:
            if inside:
                raise ValueError(f"line {number}: BEGIN SOLUTION inside another solution region")
            inside = True
            out += [s.format(indent=begin.group(1)) for s in STUB]
        elif END.match(line):
            if not inside:
                raise ValueError(f"line {number}: END SOLUTION without BEGIN SOLUTION")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError("BEGIN SOLUTION without END SOLUTION")
    return "\n".join(out)


def make_exercise(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The exercise notebook for a solution notebook (a new object; the input is not changed)."""
    nb = nbformat.from_dict(solution)
    cells = []
    for cell in nb.cells:
        tags = list(cell.get("metadata", {}).get("tags", []))
        if SOLUTION_TAG in tags:
            continue
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        if cell.cell_type == "code":
            cell.source = strip_solution(cell.source)
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    return nb


def exercise_text(solution_path: Path) -> str:
    """The exercise notebook's file content for the solution at `solution_path`."""
    nb = nbformat.read(solution_path, as_version=4)
    return nbformat.writes(make_exercise(nb)) + "\n"


NBGRADER_CONFIG = ("# nbgrader's settings for the exercises of Tool Result Lab "
                   "(written by python -m toolkit.check.build)\n") + f"""c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "tool-result-lab"
# the solution cells are cleared to the same stub as exercises/ has, at the same indentation
c.ClearSolutions.code_stub = {{"python": {chr(10).join(s.format(indent="") for s in STUB)!r}}}
# a check that takes longer is ended by the checker itself (3 s per call); this only stops a runaway cell
c.Execute.timeout = 120
# the points come from the checker, run on the submitted notebook out of the kernel (the student's code runs
# in the kernel, so a graded cell there proves nothing): its verdict replaces each graded cell's output
from nbgrader.converters.autograde import Autograde  # noqa: E402
from nbgrader.preprocessors import SaveAutoGrades  # noqa: E402
from toolkit.check._autograde import RefereeGrades  # noqa: E402

_steps = [s for s in Autograde.class_traits()["autograde_preprocessors"].default() if s is not RefereeGrades]
_steps.insert(_steps.index(SaveAutoGrades), RefereeGrades)
c.Autograde.autograde_preprocessors = _steps
"""


def _nbgrader(cell: nbformat.NotebookNode, grade_id: str, *, solution: bool = False, points: int = 0) -> None:
    meta = {"grade": points > 0, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    if points:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta


def nbgrader_source(solution: nbformat.NotebookNode, number: str) -> nbformat.NotebookNode:
    """The nbgrader source notebook for a solution: metadata on every cell, a graded cell per check."""
    from ._catalogue import get_exercise

    exercise = get_exercise(number)
    nb = nbformat.from_dict(solution)
    cells = []
    for n, cell in enumerate(nb.cells):
        tags = list(cell.get("metadata", {}).get("tags", []))
        if SOLUTION_TAG in tags:
            continue
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        answer = cell.cell_type == "code" and any(BEGIN.match(line) for line in cell.source.splitlines())
        _nbgrader(cell, f"ex{number}_answer" if answer else f"ex{number}_cell{n:02d}", solution=answer)
        cells.append(cell)
        if cell.cell_type == "code" and cell.source.strip().startswith("check("):
            for check in exercise.checks:
                graded = nbformat.v4.new_code_cell(
                    f"# 自动评分（nbgrader）：{check.title}（1 分）\n"
                    f"from toolkit.check import grade\n\ngrade({exercise.function}, {check.id!r})")
                graded.id = f"grade-{check.id.replace('_', '-')}"[:64]
                _nbgrader(graded, f"ex{number}_{check.id}", points=1)
                cells.append(graded)
    nb.cells = cells
    return nb


def build_nbgrader(solutions: Path, course: Path) -> list[str]:
    """Write the nbgrader course under `course` (source/<exNN_stem>/<exNN_stem>.ipynb, nbgrader_config.py)."""
    written = []
    for path in sorted(solutions.glob("sol[0-9][0-9]_*.ipynb")):
        name = exercise_name(path.name)
        target = course / "source" / name.removesuffix(".ipynb") / name
        target.parent.mkdir(parents=True, exist_ok=True)
        nb = nbgrader_source(nbformat.read(path, as_version=4), name[2:4])
        target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        written.append(str(target.relative_to(course)))
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(NBGRADER_CONFIG, encoding="utf-8")
        written.append(config.name)
    elif "RefereeGrades" not in config.read_text(encoding="utf-8"):
        print(f"⚠ {config} 已存在，但里面没有检查器的评分步骤（RefereeGrades）：autograde 会给每个评分单元格 0 分。"
              f"删掉它再运行一次，或者把这几行加进去：\n{NBGRADER_CONFIG.split('# the points come', 1)[1]}",
              file=sys.stderr)
    return written


def exercise_name(solution_name: str) -> str:
    """solNN_stem.ipynb -> exNN_stem.ipynb: chapter, exercise and solution of one number have distinct names."""
    return "ex" + solution_name.removeprefix("sol")


def build(solutions: Path, exercises: Path, check_only: bool = False) -> list[str]:
    """Write (or with check_only, compare) every exercise; returns the names that differ(ed)."""
    changed = []
    for path in sorted(solutions.glob("sol[0-9][0-9]_*.ipynb")):
        target = exercises / exercise_name(path.name)
        text = exercise_text(path)
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            changed.append(target.name)
            if not check_only:
                target.write_text(text, encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.check.build",
                                     description="由 solutions/ 生成 exercises/（去掉参考答案，清空输出）。")
    parser.add_argument("--check", action="store_true", help="只比较，不写文件；有差异时退出码 1")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    parser.add_argument("--exercises", type=Path, default=ROOT / "exercises")
    parser.add_argument("--nbgrader", type=Path, metavar="DIR",
                        help="同时写出 nbgrader 课程目录：DIR/source/exNN_名称/exNN_名称.ipynb（带评分单元格）和 nbgrader_config.py")
    args = parser.parse_args(argv)
    for option, folder in (("--solutions", args.solutions), ("--exercises", args.exercises)):
        if not folder.is_dir():
            print(f"✘ 找不到目录 {folder}（{option}）：请给一个存在的目录", file=sys.stderr)
            return 2
    try:
        return _run(args)
    except OSError as exc:  # a folder that cannot be written, a notebook that cannot be read: one line
        print(f"✘ {exc.filename or ''}：{exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, nbformat.ValidationError) as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.nbgrader:
        for name in build_nbgrader(args.solutions, args.nbgrader):
            print(f"已生成 {args.nbgrader / name}")
    changed = build(args.solutions, args.exercises, check_only=args.check)
    if args.check:
        for name in changed:
            print(f"exercises/{name} 与 solutions/sol{name.removeprefix('ex')} 生成的结果不一致："
                  "运行 python -m toolkit.check.build")
        return 1 if changed else 0
    for name in changed:
        print(f"已生成 exercises/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
