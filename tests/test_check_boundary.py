"""Between a worker (the student's code) and the referee only plain data travels, in a fixed vocabulary.

The audit's attack (exercise 03): a scenario check lent the worker a proxy of the referee's scripted tool;
calling it gave a referee coroutine by reference, the student's code sent its own getattr(<coroutine>,
"cr_frame"), and the frame's f_builtins["exec"] ran code in the referee, which then signed a full score:
10/10 from the shell checker, done 10/10 with a valid HMAC in the class report, 10/10 from check() in a
notebook. The variants reached a frame by f_globals, f_back, gi_frame and tb_frame. Each of them scored
10/10 and wrote a file from the referee with the checker that lent objects; here each scores 0 and runs
nothing there. Then every message the referee handles is fed hostile values: wrong types, huge sizes,
unknown names, replays, numbers it never gave out.
"""
from __future__ import annotations

import asyncio
import csv
import json
import multiprocessing
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from test_check_attacks import ROOT, make_notebook, no_traceback
from toolkit.check import get_exercise
from toolkit.check._bridge import BridgeClock
from toolkit.check._ch07 import _Model
from toolkit.check._errors import CheckerError, Tampered
from toolkit.check._player import blob_of, judge
from toolkit.check._remote import ExcSpec
from toolkit.check._session import FIELDS, MAX_MESSAGE, MESSAGES, Session
from toolkit.check._tools import Scripted, ScriptedSync

VARIANTS = ("cr_frame", "f_globals", "f_back", "gi_frame", "tb_frame")

ATTACK = r'''
PAYLOAD = """
import sys
open(%r, "w").write("the referee ran this")
player = sys.modules["toolkit.check._player"]
Report = player.Report
def forged(number, title, function, results, problem=""):
    for r in results:
        r.passed, r.kind, r.reason = True, "pass", ""
    return Report(number, title, function, results, "")
player.Report = forged
""" % MARK


def referee_exec(tool_fn):
    """From the worker, run PAYLOAD in the referee: the audit's way (cr_frame) and its variants."""
    link = object.__getattribute__(tool_fn, "_link")
    waiting = tool_fn()  # the worker's wrapper around the referee's coroutine, lent by reference
    ref = waiting.cr_frame.f_locals["id"]
    waiting.close()
    frame = link.callback("getattr", target=ref, name="cr_frame")
    if ROUTE == "cr_frame":
        run = frame.f_builtins["exec"]
    elif ROUTE == "f_globals":
        run = frame.f_globals["__builtins__"]["exec"]
    else:
        imported = frame.f_globals["__builtins__"]["__import__"]
        if ROUTE == "f_back":
            run = imported("inspect").currentframe().f_back.f_builtins["exec"]
        elif ROUTE == "gi_frame":
            run = imported("os").walk(".").gi_frame.f_builtins["exec"]
        else:  # tb_frame
            run = imported("types").TracebackType(None, frame, 0, 0).tb_frame.f_builtins["exec"]
    run(PAYLOAD, dict())


async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    try:
        referee_exec(tool_fn)
    except Exception:
        pass
    return None, "攻击"
'''


def attack(mark: Path, route: str) -> str:
    return f"MARK = {str(mark)!r}\nROUTE = {route!r}\n" + ATTACK


@pytest.mark.parametrize("route", VARIANTS)
def test_the_frame_attack_and_its_variants_score_0_from_the_shell(tmp_path: Path, route: str) -> None:
    mark = tmp_path / "referee-ran-this"
    notebook = make_notebook(tmp_path, "03", answer=attack(mark, route))
    done = subprocess.run([sys.executable, "-m", "toolkit.check", str(notebook)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    no_traceback(done)
    assert "得分：0/10" in done.stdout, done.stdout[-1500:]
    assert not mark.exists(), "the student's code ran in the referee"


def test_the_frame_attack_scores_0_in_the_class_report_and_from_check_in_a_notebook(tmp_path: Path) -> None:
    mark = tmp_path / "referee-ran-this"
    (tmp_path / "class" / "mallory").mkdir(parents=True)
    make_notebook(tmp_path / "class" / "mallory", "03", answer=attack(mark, "cr_frame"))
    table = tmp_path / "report.csv"
    done = subprocess.run([sys.executable, "-m", "toolkit.check", "--class", str(tmp_path / "class"), "--csv",
                           str(table)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    no_traceback(done)
    with open(table, encoding="utf-8-sig", newline="") as f:
        [row] = list(csv.DictReader(f))
    assert (row["status"], row["passed"], row["total"]) == ("in_progress", "0", "10"), row
    assert not mark.exists(), "the student's code ran in the class report's referee"

    from toolkit.check import _referee  # check(fn) in a notebook: the kernel's referee process judges

    namespace = {"__name__": "notebook_cell"}
    exec(attack(mark, "cr_frame"), namespace)
    try:
        report = _referee.ask(namespace["retry_with_budget"], get_exercise("03"))
    finally:
        if _referee._client is not None:
            _referee._client.close()
            _referee._client = None
    assert report.passed == 0 and report.total == 10, report.render()
    assert not mark.exists(), "the student's code ran in the notebook's referee"


SENDS_ITS_OWN = '''
import gc
import json

async def retry_with_budget(tool_fn, *args, budget, max_retries=3, **kwargs):
    """Finds the worker's end of the pipe and asks the referee for a frame in words of its own."""
    [link] = [o for o in gc.get_objects() if type(o).__name__ == "Link"]
    ask = {"op": MESSAGE, "id": 10**6, "seq": 10**6, "kind": "getattr", "target": 1, "name": "cr_frame"}
    link.conn.send_bytes(json.dumps(ask).encode())
    return await tool_fn(*args, **kwargs), None
'''


@pytest.mark.parametrize("message", ["cb", "getattr", "tool"])
def test_a_worker_that_writes_its_own_messages_is_ended_and_scores_0(message: str) -> None:
    namespace = {"__name__": "hostile", "MESSAGE": message}
    exec(SENDS_ITS_OWN, namespace)
    report = judge(get_exercise("03"), blob_of(namespace["retry_with_budget"]), seed=1)
    assert report.passed == 0, report.render()
    assert all(r.kind == "crash" and "检查器不认的消息" in r.reason for r in report.results), report.render()


# --- every handler, hostile values ------------------------------------------------------------------

class FakeWorker:
    """A pipe whose far end this test writes to as a worker would; the session's Proc around it."""

    def __init__(self) -> None:
        self.conn, self.far = multiprocessing.Pipe(duplex=True)
        self.killed = False
        self.process = types.SimpleNamespace(is_alive=lambda: not self.killed, join=lambda *_: None, exitcode=None)

    def kill(self) -> None:
        self.killed = True


SESSIONS: list[Session] = []


@pytest.fixture(autouse=True)
def close_sessions():
    yield
    for session in SESSIONS:
        session.close_coroutines()  # the calls asked for and never awaited
        run_tasks(session)  # and those awaited: no coroutine is left unawaited
        session.loop.close()
    SESSIONS.clear()


def scenario() -> tuple[Session, FakeWorker, dict[str, int]]:
    """A session in the middle of a scenario run: its clock and loop set, a tool of each kind and a model offered,
    and one call of the async tool asked for (id 90), not awaited yet."""
    proc = FakeWorker()
    session = Session(proc)
    SESSIONS.append(session)
    session.start(5.0)
    session.clock, session.loop = BridgeClock(seed=0), asyncio.new_event_loop()
    numbers = {"async": session.export(Scripted(["ok"], result="结果")).args[0],
               "sync": session.export(ScriptedSync(["ok"], result="同步结果")).args[0],
               "model": session.export(_Model()).args[0]}
    feed(session, proc, {"op": "tool", "id": 90, "tool": numbers["async"], "args": [], "kwargs": {"d": []}})
    return session, proc, numbers


def feed(session: Session, proc: FakeWorker, data: bytes | dict) -> None:
    """What the referee does with one message from the worker, as in a remote call's loop (sent from a thread:
    a message larger than the pipe's buffer is written while it is read)."""
    data = data if isinstance(data, bytes) else json.dumps(data).encode("utf-8")

    def send() -> None:
        try:
            proc.far.send_bytes(data)
        except OSError:  # the referee stopped reading: refused before the end of it
            pass

    threading.Thread(target=send, daemon=True).start()
    session.receive_later()
    session.handle(session.receive())


def run_tasks(session: Session) -> None:
    for _ in range(3):
        session.loop.run_until_complete(asyncio.sleep(0))


def valid(op: str, numbers: dict[str, int]) -> dict:
    return {"tool": {"op": "tool", "id": 101, "tool": numbers["async"], "args": [], "kwargs": {"d": []}},
            "await": {"op": "await", "id": 90},
            "cancel": {"op": "cancel", "id": 90},
            "model": {"op": "model", "id": 102, "client": numbers["model"],
                      "request": {"model": "offline-stand-in", "messages": [{"role": "user", "content": "你好"}]}},
            "now": {"op": "now", "id": 103},
            "sleep": {"op": "sleep", "id": 104, "seconds": 1.5},
            "idle": {"op": "idle", "seen": 0},
            "ret": {"op": "ret", "seq": 1, "value": 1},
            "result": {"op": "result", "n": 1, "value": 1, "args": [], "kwargs": {}, "printed": "", "sleeps": []}}[op]


def test_the_vocabulary_is_the_handlers_and_each_field_has_a_type() -> None:
    handlers = {name[3:] for name in vars(Session) if name.startswith("on_")}
    assert handlers | {"ret", "result"} == set(MESSAGES) - {None}
    assert {f for required, optional in MESSAGES.values() for f in required | optional} <= set(FIELDS)


def refused(message: object) -> None:
    session, proc, _ = scenario()
    with pytest.raises(Tampered):
        feed(session, proc, message if isinstance(message, bytes) else json.dumps(message).encode("utf-8"))
    assert proc.killed, "a worker that broke the protocol is ended"


HOSTILE = [None, True, -1, 2**60, 1.5, "1", "cr_frame", [], {}, {"d": []}, {"o": 1}, {"r": [1, True, {}]},
           float("nan")]
BAD_VALUES = {"args": [None, "cr_frame", {}, {"d": []}, {"o": 1}, {"r": [1, True, {}]}, [{"x": 1}]],
              "kwargs": [None, [], {"d": [[1, 2]]}, {"t": []}, {"r": [1, True, {}]}, {"d": [["a"]]}],
              "request": [None, [], "cr_frame", 1]}


@pytest.mark.parametrize("op", sorted(op for op in MESSAGES if op))
def test_each_handler_refuses_wrong_types_missing_and_extra_fields(op: str) -> None:
    session, proc, numbers = scenario()
    good = valid(op, numbers)
    if op not in ("ret", "result"):  # those two are answers: nobody asked for this one (below)
        feed(session, proc, good)
        assert not proc.killed, "the valid message is taken"
    for field in set(good) - {"op"}:
        bad = BAD_VALUES.get(field) or [v for v in HOSTILE if not FIELDS[field](v)]
        for value in bad:
            refused({**good, field: value})
        refused({k: v for k, v in good.items() if k != field})
    for extra in ("name", "target", "frame", "kind"):
        refused({**good, extra: "cr_frame"})


@pytest.mark.parametrize("op", ["cb", "getattr", "call", "invoke", "op", "lend", "exec", "Tool", "", None, 1])
def test_a_message_the_vocabulary_does_not_have_is_refused(op: object) -> None:
    refused({"op": op, "id": 200, "seq": 1, "target": 1, "kind": "getattr", "name": "cr_frame"})


def test_an_answer_nobody_asked_for_is_refused_and_one_asked_for_is_checked() -> None:
    _, _, numbers = scenario()
    for op in ("ret", "result"):
        refused(valid(op, numbers))
    for answer, taken in (({"op": "ret", "seq": 50, "value": [1, {"t": ["a"]}]}, True),
                          ({"op": "ret", "seq": 51, "value": 1}, False),  # another question's
                          ({"op": "ret", "seq": 50, "value": 1, "raised": {"names": ["X"], "message": ""}}, False),
                          ({"op": "ret", "seq": 50, "value": {"r": [7, True, {"type": "frame"}]}}, False)):
        session, proc, _ = scenario()
        session.ids = iter([50])
        proc.far.send_bytes(json.dumps(answer).encode("utf-8"))
        if taken:
            assert session.op(3, "getattr", "data") == [1, ("a",)]
        else:
            with pytest.raises(Tampered):
                session.op(3, "getattr", "data")


def test_huge_and_deep_messages_are_refused_and_large_plain_data_is_not() -> None:
    refused(b" " * (MAX_MESSAGE + 1))
    refused(b"[" * 100_000 + b"]" * 100_000)
    refused(b'{"op": "now", "id": ' + b"9" * 5000 + b"}")
    refused(json.dumps({"op": "tool", "id": 300, "tool": 1, "args": [[[[[[[[[[1]]]]]]]]]] * 10 ** 0 +
                        [json.loads("[" * 200 + "]" * 200)], "kwargs": {"d": []}}).encode())
    session, proc, numbers = scenario()
    feed(session, proc, {"op": "tool", "id": 301, "tool": numbers["sync"], "args": ["长" * 2_000_000],
                         "kwargs": {"d": [["n", 1]]}})
    assert proc.far.recv() == ("done", 301, ("value", "同步结果"))


def test_replays_and_numbers_never_given_out_are_refused() -> None:
    session, proc, numbers = scenario()
    feed(session, proc, valid("now", numbers))
    assert proc.far.recv() == ("done", 103, ("value", 0.0))
    with pytest.raises(Tampered):
        feed(session, proc, valid("now", numbers))  # the same id again
    for message in ({"op": "tool", "id": 400, "tool": numbers["model"], "args": [], "kwargs": {"d": []}},
                    {"op": "model", "id": 400, "client": numbers["sync"], "request": {}},
                    {"op": "tool", "id": 400, "tool": 999, "args": [], "kwargs": {"d": []}},
                    {"op": "tool", "id": 90, "tool": numbers["sync"], "args": [], "kwargs": {"d": []}},
                    {"op": "await", "id": 999}):
        refused(message)
    session, proc, numbers = scenario()
    feed(session, proc, valid("await", numbers))
    with pytest.raises(Tampered):
        feed(session, proc, valid("await", numbers))  # awaited twice
    run_tasks(session)
    assert proc.far.recv() == ("done", 90, ("value", "结果"))


def plain(value: object) -> bool:
    """Only data: what the referee may send (its answers carry no object, frame, coroutine or function of its own)."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return True
    if type(value) in (list, tuple):
        return all(plain(v) for v in value)
    if type(value) is dict:
        return all(plain(k) and plain(v) for k, v in value.items())
    if type(value) is ExcSpec:
        return value.cls.__module__ == "builtins" and plain(value.args) and plain(value.fields)
    return False


def test_every_answer_the_referee_sends_is_plain_data() -> None:
    session, proc, numbers = scenario()
    feed(session, proc, {"op": "tool", "id": 501, "tool": numbers["sync"], "args": [{"o": {
        "type": "frame", "kind": "", "text": "", "shown": "<frame>", "truthy": True}}], "kwargs": {"d": []}})
    feed(session, proc, {**valid("model", numbers), "id": 502})
    feed(session, proc, {"op": "now", "id": 503})
    feed(session, proc, {"op": "sleep", "id": 504, "seconds": 2})
    assert session.clock.step()  # wakes the sleep: "done" 504 once the loop runs its callback
    failing = session.export(Scripted(["permission"])).args[0]
    feed(session, proc, {"op": "tool", "id": 505, "tool": failing, "args": [], "kwargs": {"d": []}})
    feed(session, proc, {"op": "await", "id": 505})
    run_tasks(session)  # the sleep's callback, then the awaited call
    answers = [proc.far.recv() for _ in range(5)]
    assert [a[1] for a in answers] == [501, 502, 503, 504, 505]
    assert all(plain(a) for a in answers), answers
    assert answers[3][2] == ("value", None) and answers[4][2][1].cls is PermissionError


THINGS = {"coroutine": lambda: asyncio.sleep(0), "frame": sys._getframe, "builtin": lambda: print,
          "module": lambda: json, "function": lambda: (lambda: 1), "class": lambda: type, "object": object,
          "generator": lambda: (x for x in ()), "traceback": lambda: types.TracebackType(None, sys._getframe(), 0, 0)}


@pytest.mark.parametrize("name", THINGS)
def test_the_referee_hands_the_worker_no_object_of_its_own(name: str) -> None:
    session, _, _ = scenario()
    thing = THINGS[name]()
    for value in (thing, {"nested": [thing]}, (1, thing)):
        with pytest.raises(CheckerError):
            session.export(value)
    if asyncio.iscoroutine(thing):
        thing.close()


def test_an_object_that_fails_to_load_in_the_worker_says_so_at_once() -> None:
    """Its failure named the request under "op", which the referee took for an ask: 60 s, then called a hang."""
    class BreaksOnLoad:
        def __reduce__(self):
            return (int, ("不是数字",))

    began = time.monotonic()
    report = judge(get_exercise("02"), blob_of(BreaksOnLoad()))
    assert time.monotonic() - began < 30
    assert "没法在检查进程里重建" in report.problem and "ValueError" in report.problem, report.problem
