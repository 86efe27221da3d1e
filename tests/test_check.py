"""The exercise checker can fail: solutions pass, untouched exercises fail, known bugs fail the check named for them.

Solutions and exercises are read from their notebooks and the cells up to the
check cell are run in-process (the student's function and its imports), so
these tests check the committed notebooks, not a copy of their code.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import random
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from toolkit import ToolResult, call_tool_with_retry, get_clock
from toolkit.check import EXERCISE_NUMBERS, check, get_exercise, run_checks
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
             "06_executor", "07_sales_agent", "08_pitfalls"}
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


@pytest.mark.parametrize("number", EXERCISE_NUMBERS)
def test_untouched_exercise_fails_every_check_as_not_implemented(number: str) -> None:
    report = run_checks(student_object(notebook_for(EXERCISES, number), number), number)
    assert report.passed == 0, f"checks a stub passes: {[r.id for r in report.results if r.passed]}"
    assert all(r.reason == "还没有实现" for r in report.results), report.render()
    assert "还没有实现" in report.render() and "Traceback" not in report.render()


def test_check_in_a_notebook_prints_the_table_and_never_raises(capsys: pytest.CaptureFixture) -> None:
    async def careful_retry(tool_fn, *args, max_retries=3, **kwargs):
        raise RuntimeError("boom")

    check(careful_retry)
    out = capsys.readouterr().out
    assert "练习 06" in out and "RuntimeError: boom" in out and "得分：0/8" in out
    assert "Traceback" not in out


def test_check_explains_an_unknown_function_name(capsys: pytest.CaptureFixture) -> None:
    def my_function(x):
        return x

    check(my_function)
    out = capsys.readouterr().out
    assert "认不出 my_function" in out and "truncate_head_tail" in out


def test_explicit_exercise_number_overrides_the_name() -> None:
    solution = student_object(notebook_for(SOLUTIONS, "02"), "02")

    def my_cut(text, max_chars):
        return solution(text, max_chars)

    assert run_checks(my_cut, exercise="02").ok
    assert run_checks(my_cut, exercise=2).ok


# --- plausible wrong answers fail the check that names their bug --------------------------

def original_parse(raw, max_chars=2000):
    """The original course's parse_tool_result, given the exercise's signature."""
    if isinstance(raw, dict):
        if 'error' in raw:
            return f"❌ 工具执行失败: {raw['error']}"
        return json.dumps(raw, ensure_ascii=False, indent=2)
    if isinstance(raw, str):
        if len(raw) > max_chars:
            return raw[:max_chars // 2] + f"\n\n... (省略 {len(raw) - max_chars // 2} 字符) ..."
        return raw
    return str(raw)


def test_error_key_check_fails_error_none_check() -> None:
    report = run_checks(original_parse, "01")
    assert not report.result("error_none_is_success").passed
    assert not report.result("json_keeps_values").passed  # str(["晴"]) is not JSON
    assert report.result("error_envelope_reported").passed


def head_only(text, max_chars):
    if len(text) <= max_chars:
        return text
    head = text[: max_chars - 20]
    return f"{head}\n…（已省略 {len(text) - len(head)} 字符）…\n"


def original_smart_truncate(text, max_chars):
    """The original course's smart_truncate (strip() and a count that ignores it), head/tail split in half."""
    if len(text) <= max_chars:
        return text
    keep_head, keep_tail = max_chars // 2 - 20, max_chars // 2 - 20
    head_end = keep_head
    nl_pos = text.rfind('\n', 0, keep_head)
    if nl_pos > keep_head * 0.5:
        head_end = nl_pos
    head = text[:head_end].strip()
    tail = text[-keep_tail:].strip()
    omitted = len(text) - head_end - keep_tail
    return f"{head}\n…（已省略 {omitted} 字符）…\n{tail}"


def test_head_only_truncation_fails_keeps_tail() -> None:
    report = run_checks(head_only, "02")
    assert not report.result("keeps_tail").passed
    assert report.result("keeps_head").passed


def test_original_smart_truncate_fails_exact_count_and_line_boundaries() -> None:
    report = run_checks(original_smart_truncate, "02")
    assert not report.result("omitted_count_exact").passed
    assert not report.result("line_boundaries").passed


async def retry_everything(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    """Retries every exception (the original course's executor): PermissionError included."""
    clock = get_clock()
    for attempt in range(max_retries + 1):
        try:
            value = tool_fn(*args, **kwargs)
            return (await value if inspect.isawaitable(value) else value), None
        except Exception as exc:
            if attempt == max_retries:
                return None, f"{exc}（共尝试 {attempt + 1} 次）"
            await clock.sleep(clock.random.uniform(0, min(30, 2 ** attempt)))


async def original_retry(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    """The original course's call_tool_with_retry, with waits on the clock instead of asyncio.sleep."""
    clock = get_clock()
    for attempt in range(max_retries):
        try:
            result = await tool_fn(*args, **kwargs)
            return result, None
        except TimeoutError:
            if attempt == max_retries - 1:
                return None, "请求超时，已重试 3 次仍未成功"
            await clock.sleep((2 ** attempt) + random.uniform(0, 1))
        except PermissionError:
            return None, "权限不足，需要用户授权"
        except Exception as e:
            if attempt == max_retries - 1:
                return None, f"工具执行失败: {str(e)}"
            await clock.sleep(2 ** attempt)


def test_retrying_permission_error_fails_its_check() -> None:
    report = run_checks(retry_everything, "03")
    assert not report.result("permission_error_not_retried").passed
    assert not report.result("retry_after_honoured").passed


def test_original_retry_fails_counting_zero_retries_and_retry_after() -> None:
    report = run_checks(original_retry, "03")
    assert not report.result("max_retries_counts_retries").passed
    assert not report.result("max_retries_zero").passed
    assert not report.result("permission_error_not_retried").passed  # ValueError is retried
    assert not report.result("sync_tool_works").passed
    assert report.result("success_returns_pair").passed


async def sleeps_in_real_time(tool_fn, *args, max_retries=3, deadline=30.0, **kwargs):
    for attempt in range(max_retries + 1):
        try:
            return await tool_fn(*args, **kwargs), None
        except Exception as exc:
            if attempt == max_retries:
                return None, str(exc)
            await asyncio.sleep(0.05)


def test_real_sleeps_fail_the_clock_check() -> None:
    report = run_checks(sleeps_in_real_time, "03")
    assert not report.result("waits_on_clock").passed


def original_format(tool_name, tool_call_id, result, fmt="openai_chat"):
    """The original course's format_tool_message, accepting fmt and ignoring it."""
    return {"role": "tool", "tool_call_id": tool_call_id, "name": tool_name,
            "content": json.dumps({"status": "success" if result.error is None else "error",
                                   "result": result.data, "error": result.error,
                                   "execution_time_ms": result.duration_ms}, ensure_ascii=False)}


def test_original_format_fails_anthropic_error_type_and_serialization() -> None:
    report = run_checks(original_format, "04")
    for check_id in ("anthropic_shape", "anthropic_is_error", "error_type_present", "unserializable_data",
                     "bad_arguments_raise"):
        assert not report.result(check_id).passed, check_id
    assert report.result("chat_shape").passed


def original_evaluate(result, user_query):
    """The original course's evaluate_tool_result."""
    if result.error:
        return {"action": "report_error", "message": f"工具调用失败: {result.error}",
                "suggestion": "请检查输入参数或稍后重试"}
    if not result.data or result.data in ("[]", "{}"):
        return {"action": "retry_with_broader_query", "message": "查询结果为空",
                "suggestion": "尝试使用更宽泛的搜索条件"}
    data_str = str(result.data)
    if len(data_str) > 5000:
        return {"action": "summarize_and_present", "message": "结果较多，已为您汇总", "data": data_str[:3000]}
    return {"action": "present_directly", "message": "查询成功", "data": result.data}


def test_not_result_data_fails_zero_is_not_empty() -> None:
    report = run_checks(original_evaluate, "05")
    for check_id in ("zero_is_not_empty", "partial_branch", "retryable_retry", "long_result_summarized_as_json"):
        assert not report.result(check_id).passed, check_id
    assert report.result("fatal_report_with_suggestion").passed


async def blind_retry(tool_fn, *args, max_retries=3, **kwargs):
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)


def test_blind_retry_of_a_write_fails_the_write_check() -> None:
    report = run_checks(blind_retry, "06")
    assert not report.result("write_without_key_runs_once").passed
    assert report.result("read_tool_retried").passed and report.result("permission_error_not_retried").passed


async def original_executor_retry(tool_fn, *args, max_retries=3, **kwargs):
    """The original course's executor loop: every exception retried, writes included."""
    clock = get_clock()
    for attempt in range(max_retries):
        try:
            return await tool_fn(*args, **kwargs), None
        except Exception as e:
            if attempt == max_retries - 1:
                return None, str(e)
            await clock.sleep(2 ** attempt)


def test_original_executor_retry_fails_permission_and_write_checks() -> None:
    report = run_checks(original_executor_retry, "06")
    assert not report.result("permission_error_not_retried").passed
    assert not report.result("write_without_key_runs_once").passed


async def retry_unless_marked(tool_fn, *args, max_retries=3, **kwargs):
    """Looks for a `writes` attribute, which the executor's wrapper around the tool does not carry."""
    if getattr(tool_fn, "writes", False) and not kwargs.get("idempotency_key"):
        return None, "写操作，没有 idempotency_key，不重试"
    return await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs)


def test_write_detected_by_attribute_fails_the_write_check() -> None:
    report = run_checks(retry_unless_marked, "06")
    assert not report.result("write_without_key_runs_once").passed


def looks_for_total_only(answer, tool_results):
    ok = "9692" in answer.replace(",", "")
    return {"ok": ok, "problems": [] if ok else ["没有 9692"]}


def test_answer_check_that_only_looks_for_the_total_fails_made_up_numbers() -> None:
    report = run_checks(looks_for_total_only, "07")
    assert not report.result("made_up_number_fails").passed
    assert not report.result("failure_with_numbers_fails").passed
    assert report.result("correct_answer_passes").passed


class UnsortedGuard:
    """Keys calls on kwargs in the order given, and remembers every call, even a timeout."""

    def __init__(self):
        self.seen, self.refused = set(), 0

    async def __call__(self, tool_fn, *args, max_retries=3, **kwargs):
        key = (tool_fn.__name__, repr(args), repr(list(kwargs.items())))
        if key in self.seen:
            self.refused += 1
            return None, "重复调用"
        self.seen.add(key)
        return tuple(await call_tool_with_retry(tool_fn, *args, max_retries=max_retries, **kwargs))


def test_guard_keyed_on_kwarg_order_fails_its_check() -> None:
    report = run_checks(UnsortedGuard, "08")
    assert not report.result("keyword_order_irrelevant").passed
    assert not report.result("transient_failure_may_repeat").passed
    assert report.result("repeat_refused_without_running").passed


# --- the command line ----------------------------------------------------------------------

def test_cli_runs_an_untouched_exercise_and_exits_nonzero() -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.check", str(notebook_for(EXERCISES, "02"))], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "还没有实现" in done.stdout and "得分：0/7" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_cli_progress_over_a_folder(tmp_path: Path) -> None:
    done_02 = notebook_for(SOLUTIONS, "02")
    (tmp_path / exercise_name(done_02.name)).write_bytes(done_02.read_bytes())  # 02 done
    untouched_08 = notebook_for(EXERCISES, "08")
    (tmp_path / untouched_08.name).write_bytes(untouched_08.read_bytes())
    done = subprocess.run([sys.executable, "-m", "toolkit.check", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(l.startswith("ex02_smart_truncate") and "7/7" in l and "完成" in l for l in lines), done.stdout
    assert any(l.startswith("ex08_pitfalls") and "0/10" in l and "未开始" in l for l in lines), done.stdout
    assert "完成 1/2 个练习" in done.stdout


def test_cli_refuses_a_missing_path() -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.check", "exercises/ex99_nothing.ipynb"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "找不到" in done.stderr
