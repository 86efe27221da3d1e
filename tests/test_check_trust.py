"""A student who means to cheat: what each attack of the audit did, and what the checker does now.

    A1  records of a scenario check computed in the student's process: a patched worker reports them
    A2  the student's process finds the checker's process: writes a forged report to its stdout, kills it
    A3  the student's process rewrites the checker's files: every later student passes
    --class  a forged or missing answer from one student's checker counts as that student's result

Each attack here passed (10/10, 7/7 ✔ 完成) with the checker that trusted its worker's records, ran the
workers as the checker's own user with the checker's files writable, and read a class answer from stdout.
Where the system gives unprivileged namespaces (checked at run time: `_sandbox.problem()`), the attacks run
against isolated workers; the same attacks run with the namespaces off (TOOLKIT_CHECK_SANDBOX=off) test
the fallback: the referee non-dumpable, the class answers authenticated, the checker's files hashed.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from test_check_attacks import EX05_CHECKS, ROOT, make_notebook, no_traceback
from toolkit.check import get_exercise
from toolkit.check import _sandbox
from toolkit.check._class import UNVERIFIED, _unverified, checker_files, sign
from toolkit.check._player import Pool, blob_of, judge
from toolkit.check._session import Session

ISOLATED = not _sandbox.problem()
needs_namespaces = pytest.mark.skipif(not ISOLATED, reason=f"no namespaces here: {_sandbox.problem()}")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")
ATTEMPTS = ROOT / "tests" / "attempts"


def load(path: Path, name: str):
    namespace = {"__name__": f"trust_{path.stem}"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace[name]


# --- A1: the records of a scenario are the referee's -------------------------------------------------

PATCH_THE_WORKER = '''
import toolkit.check._remote as remote

def invoke(self, n, target, args, kwargs, clock, report):
    # answer every scenario call at once with what a right answer returns, as the old probe patch did
    self.send({"op": "result", "n": n, "value": {"t": ["第三次成功", None]}, "args": [None] * len(args),
               "kwargs": {"budget": {"d": [["tokens", 91], ["capacity", 100]]}}, **report()})

remote.Link.invoke = invoke
'''


class _PatchOnLoad:
    """A global of the answer whose unpickling, in the worker, patches the worker (the audit's way in)."""

    def __reduce__(self):
        return (exec, (PATCH_THE_WORKER, {}))


_patch = _PatchOnLoad()


async def patched_stub(tool_fn, *args, budget, max_retries=3, **kwargs):
    _patch  # noqa: B018  referenced, so cloudpickle sends it along with the function
    raise NotImplementedError("还没有实现")


def test_a_worker_patched_to_answer_for_the_scenario_counts_no_calls_and_passes_nothing() -> None:
    report = judge(get_exercise("03"), blob_of(patched_stub))
    assert report.passed == 0, report.render()
    assert "工具应被调用 3 次，实际 0 次" in report.result("retry_costs_tokens").reason, report.render()


REPLAY: list = []   # per scenario call of a valid run: the tool calls and sleeps it made, in order, and its answer
STEP = [0]


async def replaying_stub(tool_fn, *args, budget, max_retries=3, **kwargs):
    """Makes, call by call, exactly the calls and sleeps a valid answer made in another run, and answers as it did."""
    import inspect

    from toolkit import get_clock
    from toolkit.check._plain import decode

    record = REPLAY[STEP[0] % len(REPLAY)]
    STEP[0] += 1
    for event in record["events"]:
        if event[0] == "call":
            try:
                value = tool_fn(*args, **kwargs)
                if inspect.isawaitable(value):
                    await value
            except Exception:
                pass
        else:
            await get_clock().sleep(event[1])
    budget.clear()
    budget.update(decode(record["budget"]))
    return decode(record["value"])


def harvest(monkeypatch: pytest.MonkeyPatch, fn, number: str, seed: int) -> list[dict]:
    """What every scenario call of `fn` did in a judge(seed) run, as the referee saw it."""
    log: list[dict] = []
    send, handle, finish = Session.send, Session.handle, Session.finish

    def record_send(self, message):
        if message[0] == "invoke":
            log.append({"events": [], "value": None, "budget": None})
        return send(self, message)

    def record_handle(self, message):
        if message["op"] == "tool":
            log[-1]["events"].append(["call"])
        elif message["op"] == "sleep":
            log[-1]["events"].append(["sleep", message["seconds"]])
        return handle(self, message)

    def record_finish(self, message, args, kwargs):
        log[-1].update(value=message.get("value"), budget=message.get("kwargs", {}).get("budget"))
        return finish(self, message, args, kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Session, "send", record_send)
        patch.setattr(Session, "handle", record_handle)
        patch.setattr(Session, "finish", record_finish)
        assert judge(get_exercise(number), blob_of(fn), seed=seed).ok
    return log


def test_a_replay_of_another_runs_calls_and_answers_passes_only_with_that_runs_figures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    valid = load(ATTEMPTS / "ex03" / "valid_toolkit_budget.py", "retry_with_budget")
    REPLAY[:] = harvest(monkeypatch, valid, "03", seed=7)
    pool = Pool()
    try:
        same = judge(get_exercise("03"), blob_of(replaying_stub), seed=7, pool=pool)
        assert same.ok, same.render()  # the replay is faithful: fixed figures would let it through
        for seed in (8, None):  # None: drawn by the referee, as every real run is
            other = judge(get_exercise("03"), blob_of(replaying_stub), seed=seed, pool=pool)
            assert not other.ok and other.passed <= 6, other.render()
    finally:
        pool.close()
        REPLAY.clear()


# --- A2: finding the referee's process ----------------------------------------------------------------

FIND_AND_KILL = r'''
import os, signal

def _ppid(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("PPid:"):
            return int(line.split()[1])

referee = _ppid(os.getppid())  # the audit's way: worker -> fork server -> the checker
try:
    with open(f"/proc/{referee}/fd/1", "w") as out:
        out.write("练习 05 · 伪造\n得分：7/7，全部通过！\n")
    print("WROTE")
except OSError as exc:
    print("could not write:", exc)
try:
    os.kill(referee, signal.SIGKILL)
except OSError as exc:
    print("could not kill:", exc)
'''


def run_cli(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit.check", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})})


@needs_namespaces
def test_an_isolated_student_cannot_see_write_to_or_kill_the_checker(tmp_path: Path) -> None:
    done = run_cli(str(make_notebook(tmp_path, "05", before_check=(FIND_AND_KILL,))))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "伪造" not in done.stdout and f"得分：0/{EX05_CHECKS}" in done.stdout, done.stdout
    no_traceback(done)


@linux_only
def test_without_namespaces_the_checker_is_still_not_writable_and_a_killed_checker_is_no_pass(tmp_path: Path) -> None:
    off = {_sandbox.SETTING: "off"}
    notebook = make_notebook(tmp_path, "05", before_check=(FIND_AND_KILL,))
    done = run_cli(str(notebook), env=off)
    if os.geteuid() != 0:  # non-dumpable: no fd of the checker to open (root, as in CI, is let through: CAP_SYS_PTRACE)
        assert "伪造" not in done.stdout and "全部通过" not in done.stdout, done.stdout
    assert done.returncode != 0  # and killed, it is no pass
    for student in ("mallory", "alice"):
        (tmp_path / "class" / student).mkdir(parents=True)
    shutil.copy(notebook, tmp_path / "class" / "mallory" / notebook.name)
    make_notebook(tmp_path / "class" / "alice", "05")
    done = run_cli("--class", str(tmp_path / "class"), "--csv", str(tmp_path / "r.csv"), env=off)
    assert done.returncode == 0, done.stdout + done.stderr
    mallory = next(line for line in done.stdout.splitlines() if line.startswith("mallory"))
    assert "⚠ 无法验证" in mallory and "✔" not in mallory, done.stdout
    assert UNVERIFIED in done.stdout and "本机无法隔离学生代码：已用 TOOLKIT_CHECK_SANDBOX=off 关闭隔离" in done.stdout
    assert "mallory,05,ex05_decisions.ipynb,unverified" in (tmp_path / "r.csv").read_text("utf-8-sig")
    no_traceback(done)


# --- A3: rewriting the checker's files -----------------------------------------------------------------

REWRITE_THE_CHECKER = '''
import toolkit.check._ex05 as target
with open(target.__file__, "a", encoding="utf-8") as f:
    f.write("\\nfor _c in EXERCISE.checks:\\n    object.__setattr__(_c, 'run', lambda play: None)\\n")
print("REWROTE", target.__file__)
'''


def copy_of_the_project(folder: Path) -> Path:
    """The toolkit and its data in a folder of their own: an attack that works damages this copy, not the checkout."""
    project = folder / "project"
    shutil.copytree(ROOT / "toolkit", project / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "data", project / "data")
    return project


def rewrite_class(folder: Path) -> Path:
    students = folder / "class"
    for student in ("a_mallory", "b_bob", "c_carol"):
        (students / student).mkdir(parents=True)
    make_notebook(students / "a_mallory", "05", before_check=(REWRITE_THE_CHECKER,))
    make_notebook(students / "b_bob", "05")
    make_notebook(students / "c_carol", "05")
    return students


@needs_namespaces
def test_an_isolated_student_cannot_rewrite_the_checker_for_the_students_after_them(tmp_path: Path) -> None:
    project = copy_of_the_project(tmp_path)
    before = (project / "toolkit" / "check" / "_ex05.py").read_bytes()
    done = run_cli("--class", str(rewrite_class(tmp_path)), "--jobs", "1", cwd=project, env={"PYTHONPATH": str(project)})
    assert (project / "toolkit" / "check" / "_ex05.py").read_bytes() == before
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(("a_mallory", "b_bob", "c_carol"))]
    assert len(rows) == 3 and all(f"0/{EX05_CHECKS}" in row and "✔" not in row for row in rows), done.stdout
    assert "本机无法隔离" not in done.stdout
    no_traceback(done)


def test_without_namespaces_a_rewritten_checker_stops_the_report_naming_the_student(tmp_path: Path) -> None:
    project = copy_of_the_project(tmp_path)
    done = run_cli("--class", str(rewrite_class(tmp_path)), "--jobs", "1", cwd=project,
                   env={"PYTHONPATH": str(project), _sandbox.SETTING: "off"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "检查 a_mallory 的时候，检查器自己的文件被改动了" in done.stderr and "_ex05.py" in done.stderr, done.stderr
    assert "b_bob" not in done.stdout and f"{EX05_CHECKS}/{EX05_CHECKS}" not in done.stdout, done.stdout  # no report of trusted-looking rows
    no_traceback(done)


# --- the class report's answers ------------------------------------------------------------------------

def answer_for(path: Path, passed: int, total: int) -> bytes:
    results = [{"id": f"c{i}", "title": "t", "passed": i < passed, "reason": "", "hint": "", "kind": "pass"}
               for i in range(total)]
    run = {"path": str(path), "notes": [], "status": "done",
           "report": {"exercise": "05", "title": "t", "function": "decide_next_step", "problem": "",
                      "passed": passed, "total": total, "results": results}}
    import json

    return json.dumps(run, ensure_ascii=False).encode("utf-8")


def test_a_class_answer_must_be_exact_signed_and_consistent_with_its_exit_code(tmp_path: Path) -> None:
    path, key = tmp_path / "ex05_decisions.ipynb", "ab" * 32
    good = answer_for(path, 7, 7)
    assert _unverified(good + b"\n" + sign(key, good).encode() + b"\n", 0, key, path) == ""
    assert "签名" in _unverified(good + b"\n" + sign("cd" * 32, good).encode() + b"\n", 0, key, path)  # another key
    assert _unverified(good, 0, key, path)                                                    # no MAC at all
    assert _unverified(b"forged\n" + good + b"\n" + sign(key, good).encode() + b"\n", 0, key, path)  # extra output
    assert "退出码 -9" in _unverified(good + b"\n" + sign(key, good).encode() + b"\n", -9, key, path)  # killed
    assert "不符" in _unverified(good + b"\n" + sign(key, good).encode() + b"\n", 1, key, path)
    other = answer_for(tmp_path / "other" / path.name, 7, 7)
    assert "别的 notebook" in _unverified(other + b"\n" + sign(key, other).encode() + b"\n", 0, key, path)


def test_the_checkers_files_are_hashed() -> None:
    files = checker_files()
    assert "toolkit/check/_ex05.py" in files and "toolkit/check/_class.py" in files
    assert all(len(digest) == 64 for digest in files.values())


@linux_only
def test_the_referee_is_not_dumpable() -> None:
    done = subprocess.run([sys.executable, "-c", "from toolkit.check._sandbox import harden; import ctypes;"
                           "assert harden(); print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "0", done.stdout + done.stderr  # PR_GET_DUMPABLE


# --- the network: a loopback of the worker's own --------------------------------------------------------

LOOPBACK_PROBE = r'''
import socket, sys
from toolkit.check import _sandbox

_sandbox.enter()
own = socket.socket()
own.bind(("127.0.0.1", 0))
own.listen()
with socket.create_connection(own.getsockname(), timeout=2):
    print("OWN LOOPBACK OK", flush=True)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("REACHED THE HOST", flush=True)
except OSError as exc:
    print("HOST UNREACHABLE", type(exc).__name__, flush=True)
'''


@needs_namespaces
def test_an_isolated_worker_has_a_loopback_of_its_own_and_none_to_the_host(tmp_path: Path) -> None:
    """A notebook's cells reach the offline model the notebook serves itself (a namespace's loopback starts down:
    every run_agent cell of a solution failed to connect under the shell checker), and still nothing outside."""
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen()
    try:
        done = subprocess.run([sys.executable, "-c", LOOPBACK_PROBE, str(host.getsockname()[1])], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    finally:
        host.close()
    assert "OWN LOOPBACK OK" in done.stdout, done.stdout + done.stderr
    assert "HOST UNREACHABLE" in done.stdout and "REACHED THE HOST" not in done.stdout, done.stdout + done.stderr


def test_solution_cells_that_ask_the_offline_model_run_under_the_shell_checker() -> None:
    """Exercise 05's solution asks the model in two demo cells: under the checker (isolated where the system allows)
    they run, so the checker says nothing about a cell that failed."""
    done = run_cli(str(ROOT / "solutions" / "sol05_decisions.ipynb"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "运行出错" not in done.stdout + done.stderr, done.stdout + done.stderr
