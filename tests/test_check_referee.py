"""The referee's parts: plain data from the worker, who gets blamed for what, time limits, coverage of property checks."""
from __future__ import annotations

import asyncio
import collections
import sys
import threading
import time
import types
import warnings
from pathlib import Path

import pytest

from toolkit.check import get_exercise
from toolkit.check._core import Check, CheckerError, Crashed, Fail, Hang, Raised, _NOTHING, run_check
from toolkit.check._plain import Foreign, decode, encode
from toolkit.check._player import Player, blob_of, judge
from toolkit.check._props import property_check


ROOT = Path(__file__).resolve().parents[1]


def crossed(value):
    return decode(encode(value))


# --- plain data -------------------------------------------------------------------------------------

def test_plain_values_cross_as_themselves_and_containers_by_content() -> None:
    point = collections.namedtuple("Point", "x y")
    value = {"a": [1, 2.5, None, True], 3: ("x", point(1, 2)), (1, 2): collections.OrderedDict(b="中文")}
    assert crossed(value) == {"a": [1, 2.5, None, True], 3: ("x", (1, 2)), (1, 2): {"b": "中文"}}
    assert type(crossed(value)[3][1]) is tuple


def test_a_str_subclass_with_an_always_true_eq_is_not_a_str_and_equals_nothing() -> None:
    class Anything(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__

    seen = crossed({"action": Anything("present_directly")})["action"]
    assert isinstance(seen, Foreign) and not isinstance(seen, str)
    assert seen != "present_directly" and seen not in ("present_directly", "retry")
    assert "str 的子类，不是 str" in repr(seen) and str(seen) == "present_directly"


def test_a_coroutine_crosses_as_a_foreign_that_says_await_and_is_closed() -> None:
    async def answer():
        return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be an error here
        seen = crossed(answer())
    assert isinstance(seen, Foreign) and "await" in repr(seen)


def test_a_cycle_and_a_broken_repr_are_described_not_raised() -> None:
    loop: list = []
    loop.append(loop)
    node = crossed(loop)
    while isinstance(node, list):
        node = node[0]
    assert isinstance(node, Foreign) and "循环引用" in repr(node)

    class Broken:
        def __repr__(self):
            raise RuntimeError("no")

    assert "<repr() 出错>" in repr(crossed(Broken()))


# --- who is blamed ----------------------------------------------------------------------------------

def _row(body, last=_NOTHING):
    player = types.SimpleNamespace(printed="", last=last)

    def run(p):
        p.last = last
        body()

    return run_check(Check("c", "标题", "提示", run), player)


def _raise(exc):
    def body():
        raise exc
    return body


def test_each_kind_of_failure_gets_its_own_row() -> None:
    assert _row(_raise(Raised(["NotImplementedError", "RuntimeError", "Exception"], "还没有实现"))).reason == "还没有实现"
    raised = _row(_raise(Raised(["ValueError", "Exception"], "bad")))
    assert raised.kind == "raised" and raised.reason == "运行时抛出了异常 ValueError: bad"
    assert _row(_raise(Hang(3))).reason.startswith("超过 3 秒没有返回：是不是死循环？")
    assert "直接退出了" in _row(_raise(Crashed(1))).reason
    assert _row(_raise(Fail("不对"))).kind == "fail"
    error = _row(_raise(CheckerError("覆盖不够")))
    assert error.kind == "error" and "不是你的代码的问题" in error.reason and error.hint == ""


def test_the_checkers_own_exception_is_never_the_students_and_says_what_came_back() -> None:
    row = _row(lambda: len(None), last=None)
    assert row.kind == "error" and not row.passed
    assert "检查器自己出错了" in row.reason and "None（是不是忘了 return？）" in row.reason
    assert "运行时抛出了异常" not in row.reason


# --- property checks --------------------------------------------------------------------------------

def test_a_property_check_refuses_to_pass_without_its_coverage() -> None:
    from hypothesis import strategies as st

    with pytest.raises(CheckerError, match="「大于 100」只有 0 个"):
        property_check(st.integers(0, 10), lambda n: None, examples=20, classify=lambda n: {"大于 100"} if n > 100 else set(),
                       cover={"大于 100": 1})
    with pytest.raises(CheckerError):
        property_check(st.integers(), lambda n: None, examples=5, classify=lambda n: set(), cover={})
    counts = property_check(st.integers(0, 10), lambda n: None, examples=30, classify=lambda n: {"偶数"} if n % 2 == 0
                            else {"奇数"}, cover={"偶数": 5, "奇数": 5})
    assert counts["偶数"] + counts["奇数"] <= 30 and counts["偶数"] >= 5


def test_a_property_check_shows_the_example_the_students_code_raised_on() -> None:
    from hypothesis import strategies as st

    def test(n):
        if n > 3:
            raise Raised(["ZeroDivisionError", "ArithmeticError", "Exception"], "division by zero")

    with pytest.raises(Fail, match=r"输入 4 时运行出错：ZeroDivisionError"):
        property_check(st.integers(0, 10), test, examples=30, classify=lambda n: {"any"}, cover={"any": 1})


# --- the worker and its limits ----------------------------------------------------------------------

def test_a_call_that_does_not_return_is_ended_and_the_next_call_gets_a_fresh_worker() -> None:
    def truncate_json_rows(text, max_chars):
        while text == "loop":
            pass
        return text[:max_chars]

    player = Player(get_exercise("02"), blob_of(truncate_json_rows), time_limit=1.0)
    player.start()
    with pytest.raises(Hang):
        player("loop", 3)
    assert player("abcdef", 3) == "abc"
    player.close()


def test_after_a_hang_each_check_waits_one_second_and_the_rows_say_so() -> None:
    def truncate_json_rows(text, max_chars):
        while True:
            pass

    checks = [c.id for c in get_exercise("02").checks[:3]]
    began = time.monotonic()
    report = judge(get_exercise("02"), blob_of(truncate_json_rows), only=checks, time_limit=2.0)
    first, *later = [report.result(i).reason for i in checks]
    assert first.startswith("超过 2 秒没有返回") and first.endswith("（之后每项检查只等 1 秒）"), first
    assert all(r.startswith("超过 1 秒没有返回") and r.endswith("（前面已有一项检查超时，之后每项检查只等 1 秒）")
               for r in later), later
    assert time.monotonic() - began < 2 + 1 + 1 + 5


def test_os_exit_ends_only_the_worker() -> None:
    def truncate_json_rows(text, max_chars):
        import os
        if text == "exit":
            os._exit(7)
        return text

    player = Player(get_exercise("02"), blob_of(truncate_json_rows))
    player.start()
    with pytest.raises(Crashed) as crash:
        player("exit", 3)
    assert crash.value.code == 7
    assert player("ok", 3) == "ok"
    player.close()


def test_workers_are_forks_of_a_warm_server_and_a_patch_left_in_one_never_reaches_the_next() -> None:
    import multiprocessing

    from toolkit.check import _player

    if "forkserver" in multiprocessing.get_all_start_methods() and _player.forced_start_method() is None:
        assert _player.context().get_start_method() == "forkserver"  # not a new interpreter per check

    def truncate_json_rows(text, max_chars):
        import toolkit.executor
        if text == "patch":
            toolkit.executor.PATCHED_BY_STUDENT = True
        return str(getattr(toolkit.executor, "PATCHED_BY_STUDENT", False))

    first = Player(get_exercise("02"), blob_of(truncate_json_rows))
    assert first("patch", 3) == "True"
    first.close()
    second = Player(get_exercise("02"), blob_of(truncate_json_rows))
    assert second("look", 3) == "False"
    second.close()


def test_real_sleeps_are_recorded_not_waited_and_prints_are_captured() -> None:
    def truncate_json_rows(text, max_chars):
        import time
        print("调试", end=" ")
        time.sleep(30)
        asyncio.run(asyncio.sleep(20))
        return text

    player = Player(get_exercise("02"), blob_of(truncate_json_rows), time_limit=10.0)
    player.start()
    assert player("x", 3) == "x"
    assert player.sleeps == [["time.sleep", 30], ["asyncio.sleep", 20]]
    assert player.printed == "调试 "
    player.close()


def test_an_object_that_cannot_be_copied_to_a_worker_is_one_chinese_line() -> None:
    lock = threading.Lock()

    def truncate_json_rows(text, max_chars):
        with lock:
            return text

    with pytest.raises(ValueError, match="没法把 truncate_json_rows 交给检查进程"):
        blob_of(truncate_json_rows)


# --- the referee's lifetime in a kernel ---------------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process groups and /proc")
def test_a_kernel_with_a_referee_shuts_down_on_its_own_and_the_referee_ends_with_it() -> None:
    """A kernel terminates the processes of its group when it shuts down and waits while any is left; a
    referee in that group (or left a zombie) made every chapter with a check() wait the 2.5 s until the
    kernel itself was terminated. The referee lives in its own session and ends when its stdin does."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    try:
        printed: list[str] = []
        kc.execute_interactive(
            "import os, time\nfrom toolkit.check import _referee\n_referee.start()\n"
            "print(_referee._client.proc.pid, os.getpgid(_referee._client.proc.pid), os.getpgrp())",
            output_hook=lambda msg: printed.append(msg["content"].get("text", "")), timeout=60)
        referee, its_group, kernel_group = map(int, "".join(printed).split())
        assert its_group != kernel_group, "the referee is in the kernel's process group"
        kernel = km.provisioner.process
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert kernel.returncode == 0, f"the kernel was ended by a signal ({kernel.returncode}), not by itself"
    deadline = time.monotonic() + 30
    while Path(f"/proc/{referee}").exists() and "Z" not in _state(referee) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{referee}").exists() or "Z" in _state(referee), "the referee outlived its kernel"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_a_referee_that_ends_is_reaped_at_once_not_left_a_zombie() -> None:
    from toolkit.check import _referee

    client = _referee._Client()
    try:
        client.proc.kill()
        deadline = time.monotonic() + 30
        while client.proc.returncode is None and time.monotonic() < deadline:
            time.sleep(0.05)  # returncode is set by the reading thread's wait(), not by polling here
        assert client.proc.returncode is not None, "the ended referee was left unreaped"
    finally:
        client.close()
