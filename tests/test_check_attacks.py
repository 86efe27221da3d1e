"""What a student's notebook can do to the checker, on purpose or by accident, and what the checker does then.

Each test builds an exercise notebook with one change (an extra cell, an answer that misbehaves) and
runs `python -m toolkit.check` on it, as a student or a teacher would. Every attack here passed a
wrong answer, failed a right one, hung or printed a traceback with the checker that ran its checks
inside the student's kernel; here each must be judged right, within its time limits, in Chinese.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from toolkit.check import get_exercise

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"
STUB = 'raise NotImplementedError("还没有实现")'
EX05_CHECKS = len(get_exercise("05").checks)  # exercise 05, the attacks' target: an untouched one scores 0 of these


def make_notebook(folder: Path, number: str, answer: str | None = None, before_check: tuple[str, ...] = (),
                  first: tuple[str, ...] = ()) -> Path:
    """The untouched exercise, with its answer cell replaced and extra code cells added (before the check cell)."""
    [source] = EXERCISES.glob(f"ex{number}_*.ipynb")
    nb = nbformat.read(source, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if answer is not None:
        [cell] = [c for c in code if STUB in c.source]
        cell.source = answer
    [check_cell] = [c for c in code if c.source.strip().startswith("check(")]
    at = nb.cells.index(check_cell)
    nb.cells[at:at] = [nbformat.v4.new_code_cell(s) for s in before_check]
    nb.cells[1:1] = [nbformat.v4.new_code_cell(s) for s in first]
    path = folder / source.name
    nbformat.write(nb, path)
    return path


def run_cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit.check", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-800:] + done.stderr[-800:]


SOLUTION_02 = '''import json

from toolkit import smart_truncate


def truncate_json_rows(text, max_chars):
    """截断 JSON 数组形式的工具结果：开头和结尾各留若干完整的项，中间一项写明「（省略了第 a 到第 b 项，共 N 项）」。

    不超过 max_chars 的文本原样返回；不是 JSON 数组的文本按文字截断（保留开头和结尾）。
    """
    if len(text) <= max_chars:
        return text
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list):
        room = max(max_chars - 40, 0)  # smart_truncate 的标记不超过 40 个字符
        return smart_truncate(text, max_chars, keep_head=room * 2 // 3, keep_tail=room // 3)
    whole = json.dumps(items, ensure_ascii=False)
    if len(whole) <= max_chars:  # 原文有缩进才超长：重新写出来就放得下
        return whole
    total = len(items)
    sizes = [len(json.dumps(item, ensure_ascii=False)) + 2 for item in items]  # 每一项和它后面的 ", "
    head, tail, used = 0, 0, 2  # 两个方括号
    side = "head"
    while head + tail < total - 1:  # 至少省略一项（全部放得下的情况上面已经返回了）
        for trying in (side, "tail" if side == "head" else "head"):  # 轮到的一头先试，放不下再试另一头
            h, t = (head + 1, tail) if trying == "head" else (head, tail + 1)
            index = head if trying == "head" else total - 1 - tail
            note = json.dumps(omitted_note(h, t, total), ensure_ascii=False)
            if used + sizes[index] + len(note) <= max_chars:
                head, tail, used = h, t, used + sizes[index]
                side = "tail" if trying == "head" else "head"
                break
        else:  # 两头都放不下了
            break
    kept = items[:head] + [omitted_note(head, tail, total)] + items[total - tail:]
    return json.dumps(kept, ensure_ascii=False)


def omitted_note(head, tail, total):
    """开头留 head 项、结尾留 tail 项时，中间那一项说明。"""
    return f"（省略了第 {head + 1} 到第 {total - tail} 项，共 {total} 项）"
'''


def test_a_cell_that_monkeypatches_the_check_runner_changes_nothing(tmp_path: Path) -> None:
    patch = ("import toolkit.check._core as _c\n"
             "_c.run_check = lambda check, obj: _c.CheckResult(check.id, check.title, True)\n")
    done = run_cli(str(make_notebook(tmp_path, "05", before_check=(patch,))))
    assert done.returncode == 1, done.stdout
    assert f"得分：0/{EX05_CHECKS}" in done.stdout and "还没有实现" in done.stdout
    no_traceback(done)


def test_rebinding_print_and_globals_cannot_forge_the_report(tmp_path: Path) -> None:
    forged = {"exercise": "05", "title": "假的", "function": "decide_next_step", "passed": 7, "total": 7,
              "results": [{"id": f"c{i}", "title": "假的", "passed": True, "reason": "", "hint": ""} for i in range(7)]}
    cell = ("import builtins, json as _json\n"
            f"_FORGED = '<<<TOOLKIT_CHECK_REPORT>>>' + _json.dumps({forged!r}, ensure_ascii=False)\n"
            "def print(*args, **kwargs):\n"
            "    builtins.print(_FORGED)\n"
            "def globals():\n"
            "    return {'decide_next_step': lambda result, query: {'action': 'present_directly'}}\n"
            "print('伪造的报告')\n")
    done = run_cli(str(make_notebook(tmp_path, "05", before_check=(cell,))))
    assert done.returncode == 1, done.stdout
    assert f"得分：0/{EX05_CHECKS}" in done.stdout and "假的" not in done.stdout
    no_traceback(done)


ALWAYS_EQUAL = '''class Anything(str):
    """Equal to everything, contains everything."""
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__


def decide_next_step(result, user_query):
    anything = Anything('"北京"')
    return {"action": anything, "data": anything, "missing": anything, "suggestion": anything}
'''


def test_an_always_equal_str_subclass_is_not_a_str(tmp_path: Path) -> None:
    done = run_cli(str(make_notebook(tmp_path, "05", answer=ALWAYS_EQUAL)))
    assert done.returncode == 1, done.stdout
    assert f"得分：0/{EX05_CHECKS}" in done.stdout, done.stdout
    assert "str 的子类，不是 str" in done.stdout
    no_traceback(done)


def test_a_blocking_loop_is_ended_within_the_time_limit(tmp_path: Path) -> None:
    answer = "import time\n\ndef truncate_json_rows(text, max_chars):\n    while True:\n        time.sleep(0.01)\n"
    done = run_cli("--time-limit", "2", str(make_notebook(tmp_path, "02", answer=answer)), timeout=180)
    assert done.returncode == 1
    assert "超过 2 秒没有返回：是不是死循环？" in done.stdout, done.stdout
    assert "得分：0/9" in done.stdout
    no_traceback(done)


def test_a_debug_print_with_end_does_not_break_the_report(tmp_path: Path) -> None:
    answer = SOLUTION_02.replace("    if len(text) <= max_chars:", '    print("调试：", len(text), end=" ")\n'
                                 "    if len(text) <= max_chars:", 1)
    done = run_cli(str(make_notebook(tmp_path, "02", answer=answer)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "得分：9/9，全部通过！" in done.stdout
    no_traceback(done)


def test_os_exit_in_the_answer_fails_its_checks_without_a_traceback(tmp_path: Path) -> None:
    answer = "import os\n\nasync def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):\n" \
             "    os._exit(3)\n"
    done = run_cli(str(make_notebook(tmp_path, "03", answer=answer)))
    assert done.returncode == 1
    assert "得分：0/10" in done.stdout and "直接退出了" in done.stdout, done.stdout
    assert "让 Python 进程退出了" in done.stdout  # the plug-in cell, which calls it in the notebook itself
    no_traceback(done)


def test_a_syntax_error_is_reported_once_with_its_line(tmp_path: Path) -> None:
    answer = "def truncate_json_rows(text, max_chars):\n    if len(text) <= max_chars\n        return text\n"
    done = run_cli(str(make_notebook(tmp_path, "02", answer=answer)))
    assert done.returncode == 1
    assert done.stdout.count("语法错误") == 1 and "第 2 行" in done.stdout, done.stdout
    assert "没有找到" not in done.stdout and "○ 未运行" in done.stdout
    no_traceback(done)


def test_a_renamed_function_is_reported_once(tmp_path: Path) -> None:
    answer = SOLUTION_02.replace("def truncate_json_rows", "def truncate")
    done = run_cli(str(make_notebook(tmp_path, "02", answer=answer)))
    assert done.returncode == 1
    assert done.stdout.count("没有找到 truncate_json_rows") == 1, done.stdout
    no_traceback(done)


def test_a_cell_that_hangs_or_exits_before_the_check_says_the_notebook_could_not_run(tmp_path: Path) -> None:
    hang = make_notebook(tmp_path, "02", first=("while True:\n    pass\n",))
    done = run_cli("--cell-timeout", "3", str(hang))
    assert done.returncode == 1
    assert "超过 3 秒没有结束" in done.stdout and "检查没有运行" in done.stdout, done.stdout
    no_traceback(done)
    (tmp_path / "exit").mkdir()
    dead = make_notebook(tmp_path / "exit", "02", first=("import os\nos._exit(1)\n",))
    done = run_cli(str(dead))
    assert done.returncode == 1 and "让 Python 进程退出了" in done.stdout, done.stdout
    no_traceback(done)


def test_a_file_that_is_not_a_notebook_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "ex02_smart_truncate.ipynb"
    path.write_text("这不是 JSON", encoding="utf-8")
    done = run_cli(str(path))
    assert done.returncode == 1 and "读不了这个 notebook" in done.stdout
    no_traceback(done)


def _cpu_of_descendants(root: int) -> dict[int, float]:
    """{pid: CPU seconds} of every descendant of `root` (Linux /proc); the checker's workers run in groups of
    their own, so they are found by parent, not by process group."""
    parents, cpu = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = cpu[pid]
                frontier.append(pid)
    return found


def _wait_until_a_worker_spins(root: int, limit: float = 50.0) -> None:
    """Wait until one descendant burns CPU for three seconds in a row (the endless cell), not a fixed sleep:
    on a loaded CI the loader may still be importing or starting its worker after several seconds."""
    deadline, streak, before = time.monotonic() + limit, {}, _cpu_of_descendants(root)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _cpu_of_descendants(root)
        streak = {pid: streak.get(pid, 0) + 1 for pid, t in now.items() if t - before.get(pid, t) >= 0.4}
        if any(n >= 3 for n in streak.values()):
            return
        before = now
    raise AssertionError("no worker started the endless cell")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sends SIGINT to a process group; reads /proc")
def test_ctrl_c_stops_with_one_line_and_exit_code_1(tmp_path: Path, ctrl_c: None) -> None:
    hang = make_notebook(tmp_path, "02", first=("while True:\n    pass\n",))
    proc = subprocess.Popen([sys.executable, "-m", "toolkit.check", str(hang)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    _wait_until_a_worker_spins(proc.pid)  # the loader is inside the endless cell, as when a student presses Ctrl-C
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert "已中断" in err and "Traceback" not in out + err, (out, err)


def test_progress_table_ignores_copies_and_says_why_a_notebook_could_not_run(tmp_path: Path) -> None:
    make_notebook(tmp_path, "02", answer=SOLUTION_02)
    make_notebook(tmp_path, "08")
    copy = tmp_path / "ex02_smart_truncate-Copy1.ipynb"
    copy.write_bytes((tmp_path / "ex02_smart_truncate.ipynb").read_bytes())
    (tmp_path / "ex08_pitfalls_v2.ipynb").write_bytes((tmp_path / "ex08_pitfalls.ipynb").read_bytes())
    (tmp_path / "ex07_sales_agent-Copy1.ipynb").write_bytes(copy.read_bytes())  # only a copy of exercise 07
    (tmp_path / "sub").mkdir()
    broken = make_notebook(tmp_path / "sub", "03", first=("import os\nos._exit(1)\n",))
    broken.rename(tmp_path / broken.name)
    done = run_cli(str(tmp_path))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert not any("Copy1" in line or "_v2" in line for line in lines if not line.startswith("⚠")), done.stdout
    assert any(row.startswith("ex02_smart_truncate") and "9/9" in row and "✔ 完成" in row for row in lines), done.stdout
    assert any(row.startswith("ex08_pitfalls") and "0/10" in row and "○ 未开始" in row for row in lines), done.stdout
    assert any(row.startswith("ex03_retry") and "⚠ 无法运行" in row and "退出" in row for row in lines), done.stdout
    assert "完成 1/3 个练习" in done.stdout  # the _v2 copy is no second exercise 08 row
    assert "⚠ 跳过了副本 ex02_smart_truncate-Copy1.ipynb：只检查 ex02_smart_truncate.ipynb" in done.stdout
    assert "⚠ 跳过了副本 ex08_pitfalls_v2.ipynb：只检查 ex08_pitfalls.ipynb" in done.stdout
    assert "跳过了副本 ex07_sales_agent-Copy1.ipynb：没有找到 ex07_sales_agent.ipynb" in done.stdout
    no_traceback(done)


def test_a_worker_ended_from_another_thread_leaves_its_pipe_to_the_asking_thread() -> None:
    """The race behind a one-in-three '检查器自己出错了：OSError: Bad file descriptor': the referee ended the
    loader while the thread running the later cells waited on its pipe, and both closed the pipe."""
    import threading

    from toolkit.check._core import Crashed
    from toolkit.check._player import Proc

    loader, outcome = Proc(), []
    waiting = threading.Thread(target=lambda: outcome.append(_ask_forever(loader, Crashed)))
    waiting.start()
    time.sleep(1.0)  # the thread is inside ask(), waiting on the pipe
    loader.end()
    waiting.join(30)
    assert outcome == ["crashed"]
    assert loader.conn.closed  # closed by the asking thread, once; nothing was closed under it
    loader.kill()      # the owner's final kill is a no-op, not a second close


def _ask_forever(loader, crashed) -> str:
    try:
        loader.ask(("cell", "import time\nwhile True:\n    time.sleep(0.01)\n"), 60)
    except crashed:
        return "crashed"
    return "answered"


@pytest.mark.parametrize("option,value", [("--time-limit", "0"), ("--time-limit", "-1"), ("--time-limit", "nan"),
                                          ("--cell-timeout", "inf"), ("--cell-timeout", "abc")])
def test_a_time_limit_that_is_not_a_positive_number_is_a_usage_error(option: str, value: str) -> None:
    done = run_cli(option, value, str(EXERCISES / "ex02_smart_truncate.ipynb"), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("用法：") and f"✘ 参数 {option}" in done.stderr, done.stderr
    no_traceback(done)


def test_build_with_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.check.build", "--nbgrader", str(tmp_path / "course"),
                           "--exercises", str(tmp_path / "missing")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "找不到目录" in done.stderr and not (tmp_path / "course").exists()
    no_traceback(done)


def test_an_unwritable_report_path_speaks_to_the_teacher_before_checking(tmp_path: Path) -> None:
    (tmp_path / "class" / "alice").mkdir(parents=True)
    make_notebook(tmp_path / "class" / "alice", "05")
    done = run_cli("--class", str(tmp_path / "class"), "--html", str(tmp_path / "no" / "such" / "r.html"), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "报告写不进去" in done.stderr and "检查器自己出错了" not in done.stderr and "班级报告" not in done.stdout
    no_traceback(done)


def test_a_segfault_is_explained_as_a_crash_not_as_an_exit_call(tmp_path: Path) -> None:
    answer = "import ctypes\n\ndef decide_next_step(result, user_query):\n    return ctypes.string_at(0)\n"
    done = run_cli(str(make_notebook(tmp_path, "05", answer=answer)))
    assert done.returncode == 1
    assert "SIGSEGV" in done.stdout and "崩溃了" in done.stdout, done.stdout
    assert "os._exit" not in done.stdout, done.stdout
    no_traceback(done)
