"""The exercise checker can fail: solutions pass, untouched exercises fail; one source for both; the check cell's API.

Wrong and valid answers are in tests/attempts (test_check_attempts.py), attacks on the checker in
test_check_attacks.py, the referee's parts in test_check_referee.py.

Solutions and exercises are read from their notebooks and the cells up to the
check cell are run in-process (the student's function and its imports), so
these tests check the committed notebooks, not a copy of their code.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from toolkit.check import EXERCISE_NUMBERS, check, get_exercise, grade, run_checks
from toolkit.check.build import exercise_name, exercise_text, main as build_main, strip_solution

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"


def notebook_for(folder: Path, number: str) -> Path:
    [path] = folder.glob(f"*{number}_*.ipynb")
    return path


def student_namespace(path: Path) -> dict:
    """Run the notebook's code cells before its check cell (setup + the student's code) in a fresh namespace."""
    nb = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": f"notebook_{path.stem}"}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.source.strip().startswith("check("):
            return namespace
        exec(compile(cell.source, f"{path.name}:{cell.get('id')}", "exec"), namespace)
    raise AssertionError(f"{path.name} has no check(...) cell")


def student_object(path: Path, number: str):
    return student_namespace(path)[get_exercise(number).function]


# --- one source -----------------------------------------------------------------------

def test_every_chapter_has_an_exercise_and_a_solution() -> None:
    stems = {"01_parse_tool_result", "02_smart_truncate", "03_retry", "04_tool_messages", "05_decisions",
             "06_executor", "07_sales_agent", "08_pitfalls", "10_long_runs"}
    assert {p.stem for p in SOLUTIONS.glob("*.ipynb")} == {f"sol{s}" for s in stems}
    assert {p.stem for p in EXERCISES.glob("*.ipynb")} == {f"ex{s}" for s in stems}
    assert {get_exercise(n).stem for n in EXERCISE_NUMBERS} == stems


@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_committed_exercise_is_what_the_build_script_makes(number: str) -> None:
    solution = notebook_for(SOLUTIONS, number)
    exercise = EXERCISES / exercise_name(solution.name)
    assert exercise.read_text(encoding="utf-8") == exercise_text(solution), (
        f"exercises/{exercise.name} differs from the solution it is made from: run python -m toolkit.check.build")


def test_build_check_mode_reports_a_stale_exercise(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "solutions").mkdir()
    (tmp_path / "exercises").mkdir()
    solution = notebook_for(SOLUTIONS, "02")
    (tmp_path / "solutions" / solution.name).write_bytes(solution.read_bytes())
    exercise = tmp_path / "exercises" / exercise_name(solution.name)
    exercise.write_text("{}", encoding="utf-8")
    folders = ["--solutions", str(tmp_path / "solutions"), "--exercises", str(tmp_path / "exercises")]
    assert build_main(["--check", *folders]) == 1
    assert exercise.name in capsys.readouterr().out
    assert build_main(folders) == 0  # writes it
    assert build_main(["--check", *folders]) == 0
    assert exercise.read_text(encoding="utf-8") == exercise_text(solution)


def test_strip_solution_keeps_signature_and_indentation() -> None:
    source = "def f(x):\n    \"\"\"Doc.\"\"\"\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n\nprint(1)"
    assert strip_solution(source) == (
        "def f(x):\n    \"\"\"Doc.\"\"\"\n    # 在这里写你的代码（YOUR CODE HERE）\n"
        "    raise NotImplementedError(\"还没有实现\")\n\nprint(1)")


@pytest.mark.parametrize("source", ["### BEGIN SOLUTION\nx = 1", "x = 1\n### END SOLUTION",
                                    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"])
def test_unbalanced_solution_markers_are_refused(source: str) -> None:
    with pytest.raises(ValueError):
        strip_solution(source)


@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_exercise_has_no_solution_code_outputs_or_solution_notes(number: str) -> None:
    nb = nbformat.read(notebook_for(EXERCISES, number), as_version=4)
    text = json.dumps(nb, ensure_ascii=False)
    assert "BEGIN SOLUTION" not in text and "参考答案的取舍" not in text
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assert nb.metadata["kernelspec"]["name"] == "python3"
    kinds = [c.source for c in nb.cells]
    assert any(s.startswith("# 练习") and "学习目标" in s for s in kinds)
    assert any("<details>" in s for s in kinds), "hints that open on demand"
    assert any(s.strip().startswith("check(") for s in kinds)
    assert any('raise NotImplementedError("还没有实现")' in s for s in kinds)


@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_solution_has_markers_a_note_and_stored_passing_check_output(number: str) -> None:
    nb = nbformat.read(notebook_for(SOLUTIONS, number), as_version=4)
    assert any("### BEGIN SOLUTION" in c.source for c in nb.cells if c.cell_type == "code")
    assert any("参考答案的取舍" in c.source for c in nb.cells if c.cell_type == "markdown")
    [check_cell] = [c for c in nb.cells if c.cell_type == "code" and c.source.strip().startswith("check(")]
    shown = "".join(o.get("text", "") for o in check_cell.outputs)
    assert "全部通过" in shown and "未通过" not in shown, shown[-300:]
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", (cell.get("id"), out.get("evalue"))


# --- the checks are real ----------------------------------------------------------------

@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_solution_passes_every_check(number: str) -> None:
    report = run_checks(student_object(notebook_for(SOLUTIONS, number), number), number)
    assert report.ok, report.render()
    assert all(r.kind == "pass" for r in report.results)


@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_untouched_exercise_fails_every_check_as_not_implemented(number: str) -> None:
    report = run_checks(student_object(notebook_for(EXERCISES, number), number), number)
    assert report.passed == 0, f"checks a stub passes: {[r.id for r in report.results if r.passed]}"
    assert all(r.reason == "还没有实现" and r.kind == "todo" for r in report.results), report.render()
    assert "还没有实现" in report.render() and "Traceback" not in report.render()


def test_check_in_a_notebook_prints_the_table_and_never_raises(capsys: pytest.CaptureFixture) -> None:
    async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
        raise RuntimeError("boom")

    check(careful_retry)
    out = capsys.readouterr().out
    assert "练习 06" in out and "RuntimeError: boom" in out and "得分：0/9" in out
    assert "✘ 未通过" in out and "Traceback" not in out


def test_check_explains_an_unknown_function_name(capsys: pytest.CaptureFixture) -> None:
    def my_function(x):
        return x

    check(my_function)
    out = capsys.readouterr().out
    assert out.startswith("✘ 认不出 my_function") and "truncate_json_rows" in out


def test_explicit_exercise_number_overrides_the_name() -> None:
    solution = student_object(notebook_for(SOLUTIONS, "02"), "02")

    def my_cut(text, max_chars):
        return solution(text, max_chars)

    assert run_checks(my_cut, exercise="02").ok
    assert run_checks(my_cut, exercise=2).ok


def test_an_exception_that_cannot_be_printed_is_still_the_students() -> None:
    """In a probe (the student's function run against scripted tools), not only in a plain call."""
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    async def retry_with_budget(tool_fn, *args, **kwargs):
        raise Unprintable()

    row = run_checks(retry_with_budget, "03").result("success_returns_pair")
    assert not row.passed and "Unprintable" in row.reason and "检查器" not in row.reason


def test_check_with_only_runs_those_checks_and_names_an_unknown_id(capsys: pytest.CaptureFixture) -> None:
    def head_only(text, max_chars):
        return text[:max_chars]

    check(head_only, "02", only=["short_text_unchanged", "valid_json"])
    out = capsys.readouterr().out
    assert "得分：1/2" in out and "不超过 max_chars 的文本原样返回" in out
    check(head_only, "02", only=["no_such_check"])
    out = capsys.readouterr().out
    assert out.startswith("✘ ") and "no_such_check" in out and "valid_json" in out and "Traceback" not in out


def test_a_chapter_without_checks_of_its_own_is_a_chinese_error() -> None:
    with pytest.raises(ValueError, match="第 99 章没有自己的检查"):
        get_exercise("ch99")


def test_grade_prints_one_line_for_a_passing_check_and_raises_for_a_failing_one(
        capsys: pytest.CaptureFixture) -> None:
    def truncate_json_rows(text, max_chars):
        return text[:max_chars]

    grade(truncate_json_rows, "short_text_unchanged")
    assert capsys.readouterr().out.strip() == "✔ 不超过 max_chars 的文本原样返回"
    with pytest.raises(AssertionError, match="不是合法的 JSON"):
        grade(truncate_json_rows, "valid_json")


def test_a_referee_that_died_is_started_again(capsys: pytest.CaptureFixture) -> None:
    from toolkit.check import _referee

    def truncate_json_rows(text, max_chars):
        return text

    check(truncate_json_rows)
    _referee._client.proc.kill()
    _referee._client.proc.wait(10)
    check(truncate_json_rows)
    out = capsys.readouterr().out
    assert out.count("练习 02") == 2 and "检查进程没能运行" not in out


# --- the command line ----------------------------------------------------------------------

def test_cli_runs_an_untouched_exercise_and_exits_nonzero() -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.check", str(notebook_for(EXERCISES, "02"))], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "还没有实现" in done.stdout and "得分：0/9" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    # advice that fits the shell: run the command again, not check(...) (a notebook's call)
    assert f"保存笔记本，再运行 python -m toolkit.check {notebook_for(EXERCISES, '02')}" in done.stdout
    assert "check(" not in done.stdout


def test_cli_refuses_a_missing_path() -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.check", "exercises/ex99_nothing.ipynb"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "找不到" in done.stderr
