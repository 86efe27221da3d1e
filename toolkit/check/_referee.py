"""The referee process behind `check(fn)` in a notebook: started once per kernel, reused, never running student code.

    kernel (the student's)  --cloudpickle bytes of fn-->  referee  --the same bytes-->  worker
    kernel  <--the report (JSON)--  referee  <--plain data--  worker

The kernel only pickles the student's object and prints the report it gets
back; the checks, the expected values and the verdicts live here, in a process
the notebook's cells cannot reach. Frames on the referee's stdin/stdout: a
4-byte big-endian length, then the bytes. A request is two frames (a JSON
header, the pickled object), the answer one (the report as JSON, or
{"referee_error": ...}). The referee keeps a worker started ahead, so a check is as
quick as the checks themselves; after the first `check()` in a kernel, which
starts the referee (about half a second).

Ctrl-C in the kernel stops waiting at once: the referee is ended (its worker
with it) and the next `check()` starts a new one. The referee runs in its own
session, so neither a kernel interrupt nor a kernel's shutdown signals reach
it: it ends when its stdin does, that is with the kernel (it still ignores
SIGINT, should one be sent to it by hand).
"""
from __future__ import annotations

import json
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO, Iterable

from ._core import Exercise, Report

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def read_frame(stream: BinaryIO) -> bytes | None:
    head = stream.read(4)
    if len(head) < 4:
        return None
    size = struct.unpack(">I", head)[0]
    data = stream.read(size)
    return data if len(data) == size else None


def write_frame(stream: BinaryIO, data: bytes) -> None:
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


# --- the kernel's side ------------------------------------------------------------------------

class _Client:
    """A running referee process, read by a thread so that waiting for it stays interruptible."""

    def __init__(self) -> None:
        env = dict(os.environ, TOOLKIT_DOTENV="none")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
        # Its own session: a kernel shutting down signals every process in its group and waits while any is
        # left (2.6 s per kernel); the referee needs no signal, since it ends when its stdin does.
        self.proc = subprocess.Popen([sys.executable, "-m", "toolkit.check._referee"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        self.answers: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True, name="toolkit-check-referee").start()

    def _read(self) -> None:
        while (frame := read_frame(self.proc.stdout)) is not None:
            self.answers.put(frame)
        self.answers.put(None)
        self.proc.wait()  # reaped at once: a referee that ended is not left as a zombie until the next check()

    def ask(self, header: dict, blob: bytes) -> dict:
        write_frame(self.proc.stdin, json.dumps(header).encode("utf-8"))
        write_frame(self.proc.stdin, blob)
        while True:
            try:
                frame = self.answers.get(timeout=0.2)
                break
            except queue.Empty:
                continue
        if frame is None:
            raise OSError(f"the referee process ended (exit code {self.proc.poll()})")
        return json.loads(frame.decode("utf-8"))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)


_client: _Client | None = None


def start() -> None:
    """Start this kernel's referee now, without waiting for it (toolkit.check does so when a kernel imports it:
    the referee's start-up, about a second or two, then overlaps the cells before the first check())."""
    global _client
    if _client is None or _client.proc.poll() is not None:
        _client = _Client()


def ask(obj: Any, exercise: Exercise, only: Iterable[str] | None = None) -> Report:
    """The report for `obj` from this kernel's referee (started on first use). ValueError: obj cannot be sent."""
    global _client
    from ._player import blob_of, not_run

    blob = blob_of(obj)
    header = {"exercise": exercise.number, "only": list(only) if only is not None else None}
    checks = exercise.checks if only is None else [exercise.check(i) for i in only]
    for attempt in (1, 2):  # a referee that died (the machine was short of memory, say) is started again once
        start()
        try:
            answer = _client.ask(header, blob)
            break
        except (KeyboardInterrupt, OSError) as exc:
            _client.close()
            _client = None
            if isinstance(exc, KeyboardInterrupt):
                raise
            if attempt == 2:
                return not_run(exercise, checks, f"检查进程没能运行（{exc}）")
    if "referee_error" in answer:
        return not_run(exercise, checks, answer["referee_error"])
    return Report.from_dict(answer)


# --- the referee's side -------------------------------------------------------------------------

def serve() -> None:
    """The referee's loop: judge each request with a warm worker; the protocol owns stdin and stdout."""
    from ._sandbox import check_soon, harden

    harden()  # no other process of this user (a worker on a system without namespaces) may open its /proc entries
    check_soon()  # whether workers can be isolated here: asked while the rest is imported
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # a stray print (ours or a library's) can no longer reach the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    from ._catalogue import get_exercise
    from ._player import Pool, fork_from_here, judge

    pool = Pool()
    unusable = ""  # a setting that leaves no way to start a worker: said in every answer
    try:
        fork_from_here()  # this process holds no secret and runs one thread: its forks are the workers
        pool.prefetch()
    except ValueError as exc:  # TOOLKIT_CHECK_START_METHOD names a start method this system does not have
        unusable = str(exc)

    while (header := read_frame(requests)) is not None:
        blob = read_frame(requests)
        if blob is None:
            break
        if unusable:
            write_frame(answers, json.dumps({"referee_error": unusable}, ensure_ascii=False).encode("utf-8"))
            continue
        try:
            request = json.loads(header.decode("utf-8"))
            report = judge(get_exercise(request["exercise"]), blob, only=request.get("only"), pool=pool)
            answer = report.to_dict()
        except Exception as exc:  # the referee's own failure: one line for the student, never a traceback
            answer = {"referee_error": f"检查器出错（不是你的代码的问题）：{type(exc).__name__}: {str(exc)[:200]}"}
        write_frame(answers, json.dumps(answer, ensure_ascii=False).encode("utf-8"))
        pool.prefetch()
    pool.close()


if __name__ == "__main__":
    serve()
