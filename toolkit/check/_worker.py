"""The worker: a process of its own where the student's code runs, and nothing of the referee's.

Started by the referee (multiprocessing, see _player.py) and driven over one pipe. The referee's requests are
pickled (the referee is trusted); every answer is JSON (_plain.py), checked by the referee, so nothing the
student's code builds is ever unpickled where verdicts are taken. The referee ends the worker when an answer is
late; the worker ends itself when the referee goes away. Two roles, same process kind:
  - loader: runs a notebook's code cells in an IPython shell ("cell"), then hands the student's object over as
    cloudpickle bytes ("export"), which the referee passes, unopened, to a fresh player;
  - player: loads the object ("load") in a process where no student cell ran (a cell that monkeypatched the
    checker left its patch behind) and runs it: "call" (plain data back) or, for a scenario check, "invoke" and
    "op" (_remote.py: the tools, the model and the clock are stand-ins that ask the referee in plain data).
Around every request the student's prints are captured (they never reach the pipe) and real waits (time.sleep,
asyncio.sleep) are recorded instead of waited: a check can say "用了真实的 sleep" instead of timing out.
"""
from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from typing import Any

from ._plain import encode, exception_data

REAL_SLEEPS: list[list] = []  # [kind, seconds] of every real wait asked for during the current request


def _guard_process(conn: Any = None) -> None:
    """Streams to nowhere (prints are captured per request), Ctrl-C left to the referee, die with the referee.

    A session of its own: os.kill(0, ...) (every process of the caller's group) would otherwise reach the
    referee, which started this process in its own group. Every file descriptor but its pipe is closed: a
    worker forked from the referee itself (the notebook's referee does so) would otherwise hold the
    referee's own channel to the kernel."""
    import multiprocessing
    import multiprocessing.connection

    parent = multiprocessing.parent_process()
    keep = {fd for fd in (getattr(conn, "fileno", lambda: None)(), getattr(parent, "sentinel", None))
            if isinstance(fd, int)}
    _close_inherited(keep)
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:  # already a group leader
            pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdin = open(os.devnull, encoding="utf-8")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        def watch() -> None:
            multiprocessing.connection.wait([parent.sentinel])
            os._exit(3)
        threading.Thread(target=watch, daemon=True, name="referee-watch").start()


def _close_inherited(keep: set[int]) -> None:
    """Close every descriptor above 2 except `keep` (where the system lists them: /proc/self/fd, /dev/fd)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            fds = [int(name) for name in os.listdir(listing) if name.isdigit()]
            break
        except OSError:
            fds = []
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listing's own descriptor, already gone
                pass


def _instrument_sleeps() -> None:
    """Real waits return at once and are recorded: the exercises wait on the simulated clock only."""
    real_async_sleep = asyncio.sleep

    def blocking_sleep(seconds: float = 0) -> None:
        REAL_SLEEPS.append(["time.sleep", seconds])

    async def async_sleep(delay: float, result: Any = None) -> Any:
        if delay and delay > 0:
            REAL_SLEEPS.append(["asyncio.sleep", delay])
        return await real_async_sleep(0, result)

    time.sleep = blocking_sleep
    asyncio.sleep = async_sleep
    asyncio.tasks.sleep = async_sleep


class Worker:
    def __init__(self, link: Any = None) -> None:
        self.link = link
        self.exercise = ""
        self.obj: Any = None
        self.shell: Any = None

    # --- player -----------------------------------------------------------------------
    def load(self, blob: bytes, exercise: str) -> dict:
        self.exercise = exercise
        self.obj = pickle.loads(blob)
        if self.link is not None:
            self.link.handles[0] = self.obj  # handle 0: the object a scenario's probe calls
        return {"value": None}

    def call(self, args: tuple, kwargs: dict) -> dict:
        try:
            value = self.obj(*args, **kwargs)
        except BaseException as exc:
            return {"raised": exception_data(exc)}
        return {"value": encode(value)}

    # --- loader -----------------------------------------------------------------------
    def chdir(self, folder: str) -> dict:
        """Cells run in the notebook's folder, as in Jupyter."""
        os.chdir(folder)
        sys.path.insert(0, folder)
        return {"ok": True}

    def cell(self, source: str) -> dict:
        if self.shell is None:
            self.shell = _shell()
        result = self.shell.run_cell(source, store_history=False)
        error = result.error_before_exec or result.error_in_exec
        return {"error": exception_data(error)} if error is not None else {"ok": True}

    def export(self, name: str) -> dict:
        namespace = self.shell.user_ns if self.shell is not None else {}
        if name not in namespace:
            return {"missing": True}
        import cloudpickle

        try:
            blob = cloudpickle.dumps(namespace[name])
        except Exception as exc:
            return {"unpicklable": exception_data(exc)}
        return {"blob": base64.b64encode(blob).decode("ascii")}


def _shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.showtraceback = lambda *a, **k: None  # errors come back as data, not as printed tracebacks
    shell.showsyntaxerror = lambda *a, **k: None
    return shell


def serve(conn: Any, sandbox: dict | None = None) -> None:
    """The worker's main loop (the target of the spawned process).

    `sandbox` (Linux): enter namespaces of its own first (see _sandbox.py), before any thread starts."""
    if sandbox is not None:
        from ._sandbox import enter

        enter(**sandbox)
    _guard_process(conn)
    _instrument_sleeps()
    os.environ["TOOLKIT_CHECK_DEFER"] = "1"  # check() inside a notebook run by the loader only notes it was called
    os.environ["TOOLKIT_DOTENV"] = "none"    # the offline model answers: the checker never reads a .env
    import toolkit  # noqa: F401  warm: the first request should not pay for the imports
    import toolkit.executor  # noqa: F401
    from ._remote import Link

    link = Link(conn)
    worker = Worker(link)
    while True:
        request = link.next_message()
        if request is None:
            return
        op, *args = request
        if op == "done":  # a late answer to a scenario call that has ended
            continue
        REAL_SLEEPS.clear()
        captured = io.StringIO()

        def report() -> dict:  # called within this turn of the loop
            return {"sleeps": list(REAL_SLEEPS), "printed": captured.getvalue()[:2000]}  # noqa: B023

        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            if op == "invoke":
                link.invoke(*args, report=report)
                continue
            if op == "op":
                link.op(*args)
                continue
            try:
                reply = getattr(worker, op)(*args)
            except BaseException as exc:  # the student's object failing to load, or the worker's own failure
                frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
                where = f"{os.path.basename(frame[0].filename)}:{frame[0].lineno}" if frame else ""
                reply = {"failed": exception_data(exc), "where": where, "asked": op}
        reply.update(report())
        try:
            link.send(reply)
        except (TypeError, ValueError) as exc:
            link.send({"failed": exception_data(exc), "asked": op, "sleeps": [], "printed": ""})
