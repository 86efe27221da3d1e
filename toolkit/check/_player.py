"""The referee's side of a check run: worker processes, the Player a check talks to, and `judge`.

The student's object lives in a worker (_worker.py); a check, in the referee (see __init__.py), sees it only
through a Player:

    play(*args, **kwargs)        run obj(*args, **kwargs) in the worker; the plain value comes back
    play.run("probe", **params)  run one of the exercise's probes here, on the object in the worker (_bridge.py):
                                 the tools and clock it offers stay here; its record comes back as plain data
    play.sleeps                  the real waits (time.sleep / asyncio.sleep) the last request asked for
    play.printed                 what the student's code printed during this check

Every request has a time limit: a worker that has not answered in time is killed (a `while True` included) and
the check fails with `Hang`; the next request gets a fresh worker with the object loaded again.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import secrets
import sys
import types
from typing import Any, Iterable

from ._core import _NOTHING, CheckerError, CheckResult, Crashed, Exercise, Hang, Raised, Report, run_check
from ._bridge import CallableWorkerRef, sanitize
from ._plain import Foreign
from ._session import Session

TIME_LIMIT = 3.0     # real seconds one request may take; every wait in the checks is simulated
AFTER_HANG = 1.0     # the limit once the object has hung: a loop that never ends costs 3 s once, not per check
_OBJECT = Foreign("object", "", "", "（你的函数）", True)
LOAD_LIMIT = 60.0    # loading the object may import modules it refers to (matplotlib takes seconds)
WARM_MODULES = ["toolkit", "toolkit.executor", "toolkit.check._worker"]  # what every worker imports first


START_SETTING = "TOOLKIT_CHECK_START_METHOD"  # "spawn": every worker a new interpreter, as on Windows (CI forces it)


def forced_start_method() -> str | None:
    """The start method $TOOLKIT_CHECK_START_METHOD asks for (None: the default); ValueError (Chinese) for one
    this system does not have."""
    wanted = os.environ.get(START_SETTING, "").strip().lower()
    if not wanted:
        return None
    methods = multiprocessing.get_all_start_methods()
    if wanted not in methods:
        raise ValueError(f"{START_SETTING}={wanted} 在这台机器上用不了：只能是 {'、'.join(methods)}，或者不设置")
    return wanted


def _default_context() -> Any:
    """Where the system has it, "forkserver": one clean server process imports WARM_MODULES once and each
    worker is a fork of it (milliseconds), not a new interpreter importing them again (about 0.2 s of CPU per
    check). No student code ever runs in the server, so each worker starts as clean as a spawned one. On
    Windows, "spawn". $TOOLKIT_CHECK_START_METHOD chooses another (CI walks Windows' path on Linux with spawn)."""
    method = forced_start_method() or ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                                       else "spawn")
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(WARM_MODULES)
    return context


_CONTEXT: Any = None  # chosen when the first worker starts (a setting that cannot be used is then a ValueError)


def context() -> Any:
    """The multiprocessing context workers start from."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = _default_context()
    return _CONTEXT


def fork_from_here() -> None:
    """Workers are forks of this process, not of a fork server: for a referee that holds nothing a student
    may not see and runs one thread (the notebook's referee: see _referee.serve). It saves the fork
    server's interpreter, about a second of a kernel's first check(). The worker closes every descriptor
    it inherited but its pipe (_worker._guard_process) before any student code runs. Not when
    $TOOLKIT_CHECK_START_METHOD names a start method (ValueError for one this system does not have)."""
    global _CONTEXT
    if forced_start_method() is None and "fork" in multiprocessing.get_all_start_methods() \
            and sys.platform.startswith("linux"):
        _CONTEXT = multiprocessing.get_context("fork")


class Proc:
    """One worker process and its pipe."""

    def __init__(self) -> None:
        from ._sandbox import plan
        from ._worker import serve

        start = context()
        self.conn, child = start.Pipe(duplex=True)
        self.process = start.Process(target=serve, args=(child, plan()), daemon=True, name="toolkit-check-worker")
        # Why swap __main__: spawn re-runs the caller's main module in the child, and the fork server imports
        # it (a kernel's, pytest's, "<stdin>" that cannot be re-run). The worker needs nothing from it, so it
        # is shown an empty one.
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            self.process.start()
        finally:
            sys.modules["__main__"] = main
        child.close()
        self.stopped = ""  # why the referee ended this worker on purpose, if it did
        self.session = Session(self)  # the referee's end of the pipe (_session.py)

    def ask(self, request: tuple, limit: float) -> dict:
        """Send one request; its JSON answer, or Hang after `limit` seconds, or Crashed if the worker died."""
        return self.session.request(request, limit)

    def alive(self) -> bool:
        return self.process.is_alive()

    def end(self) -> None:
        """End the worker process; safe while another thread waits in ask() (it then gets Crashed).
        The pipe stays open: closing it under that thread could hand its file descriptor to the next
        worker's pipe, or close it twice."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)

    def kill(self) -> None:
        """End the worker and close the pipe: only the thread that asks (or once no one asks)."""
        self.end()
        self.conn.close()


class Pool:
    """Hands out fresh workers; `prefetch()` starts the next one early so it is warm when needed."""

    def __init__(self) -> None:
        self._spare: Proc | None = None

    def prefetch(self) -> None:
        if self._spare is None or not self._spare.alive():
            self._spare = Proc()

    def take(self) -> Proc:
        spare, self._spare = self._spare, None
        return spare if spare is not None and spare.alive() else Proc()

    def close(self) -> None:
        if self._spare is not None:
            self._spare.kill()
            self._spare = None


class LoadFailed(Exception):
    """The student's object could not be rebuilt in the worker (one Chinese line)."""



class Player:
    """The student's object as a check sees it: everything runs in a worker, only plain data comes back."""

    def __init__(self, exercise: Exercise, blob: bytes, *, time_limit: float = TIME_LIMIT,
                 pool: Pool | None = None) -> None:
        self.exercise, self.blob, self.time_limit = exercise, blob, time_limit
        self.pool = pool or Pool()
        self.proc: Proc | None = None
        self.printed = ""
        self.sleeps: list[list] = []
        self.last: Any = _NOTHING
        self.rng = random.Random(0)  # the run's own figures for scenario checks (judge draws them per run)
        self.hung = False

    def start(self) -> None:
        """Load the object into a worker; LoadFailed says why it cannot be."""
        self.proc = self.pool.take()
        try:
            reply = self.proc.ask(("load", self.blob, self.exercise.number), LOAD_LIMIT)
        except (Hang, Crashed) as exc:
            self.proc = None
            raise LoadFailed(f"在检查进程里重建 {self.exercise.function} 时：{exc}") from None
        if "failed" in reply:
            self.close()
            failed = reply["failed"]
            raise LoadFailed(f"没法在检查进程里重建 {self.exercise.function}（{failed['names'][0]}: "
                             f"{failed['message'][:160]}）")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask(("call", args, kwargs))

    def run(self, probe: str, **params: Any) -> Any:
        """Run one of the exercise's probes here, in the referee, on the object in the worker: the tools and the
        clock it hands the object stay here, so its record (calls, arguments, waits) is the referee's own."""
        run = self.exercise.probe(probe)
        self._started()
        session = self.proc.session
        session.start(self.time_limit)
        session.printed, session.sleeps = "", []
        fault: BaseException | None = None
        try:
            record = run(CallableWorkerRef(session, 0, _OBJECT), **params)
        except (Hang, Crashed) as exc:
            fault = exc
        except BaseException:
            if session.fault is None:
                raise
        finally:
            self.printed += session.printed
            self.sleeps = session.sleeps
        fault = fault or session.fault  # a probe that caught the Hang (as the student's exception) still hung
        if fault is not None:
            self._lost(fault)
            raise fault
        self.last = sanitize(record)
        return self.last

    def _lost(self, exc: BaseException) -> None:
        """The worker was ended (a Hang, whose row then says the limit drops) or died: the next request gets a
        fresh one."""
        self.proc = None
        if isinstance(exc, Hang):
            self.time_limit = min(self.time_limit, AFTER_HANG)
            exc.args = (f"{exc}（{'前面已有一项检查超时，' if self.hung else ''}之后每项检查只等 {self.time_limit:g} 秒）",)
            self.hung = True
        self.pool.prefetch()  # the next check starts on a warm worker

    def _started(self) -> None:
        if self.proc is None:
            try:
                self.start()
            except LoadFailed as exc:
                raise CheckerError(str(exc)) from None

    def _ask(self, request: tuple) -> Any:
        self._started()
        try:
            reply = self.proc.ask(request, self.time_limit)
            value = self.proc.session.take(reply.get("value"), handles=False)
        except (Hang, Crashed) as exc:
            self._lost(exc)
            raise
        self.printed += reply.get("printed", "")
        self.sleeps = reply.get("sleeps", [])
        if "raised" in reply:
            raise Raised(reply["raised"]["names"], reply["raised"]["message"])
        if "failed" in reply:
            failed = reply["failed"]
            raise CheckerError(f"{failed['names'][0]}: {failed['message'][:200]}（{reply.get('asked')}，"
                               f"{reply.get('where', '')}）")
        self.last = value
        return self.last

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc = None


def not_run(exercise: Exercise, checks: Iterable, problem: str) -> Report:
    """The report when no check could run: the problem once, every row "○ 未运行"."""
    return Report(exercise.number, exercise.title, exercise.function,
                  [CheckResult(c.id, c.title, False, "", c.hint, "not_run") for c in checks], problem)


def judge(exercise: Exercise, blob: bytes, *, only: Iterable[str] | None = None, time_limit: float = TIME_LIMIT,
          pool: Pool | None = None, seed: int | None = None) -> Report:
    """Run the exercise's checks (or those in `only`) against the pickled object `blob`.

    `play.rng` is drawn here, per run (from `seed` when given): a scenario's figures (tokens, results,
    Retry-After) differ from one run to the next, so answers replayed from another run do not match."""
    checks = exercise.checks if only is None else tuple(exercise.check(i) for i in only)
    player = Player(exercise, blob, time_limit=time_limit, pool=pool)
    player.rng = random.Random(secrets.randbits(64) if seed is None else seed)
    try:
        player.start()
    except LoadFailed as exc:
        return not_run(exercise, checks, str(exc))
    try:
        results = [run_check(check, player) for check in checks]
        return Report(exercise.number, exercise.title, exercise.function, results)
    finally:
        player.close()


def blob_of(obj: Any) -> bytes:
    """The student's object as cloudpickle bytes (by value, so the worker needs none of the caller's modules).

    ValueError (Chinese) when it cannot be copied, e.g. it refers to a lock or an open file.
    """
    import cloudpickle

    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    by_value = module is not None and module.__name__ != "__main__" and \
        module.__name__.split(".")[0] not in ("toolkit", "builtins") and getattr(module, "__file__", None)
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(obj)
    except Exception as exc:
        name = getattr(obj, "__name__", type(obj).__name__)
        raise ValueError(f"没法把 {name} 交给检查进程：{type(exc).__name__}: {str(exc)[:120]}。它用到的某个全局变量"
                         "（例如锁、打开的文件、正在运行的对象）不能复制：把它放到函数里面创建") from None
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
