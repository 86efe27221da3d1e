"""The checker's vocabulary: a Check, an Exercise, a result, a Report and its Chinese table.

A check is a referee-side function: it receives a Player (the student's object seen from outside, see _player.py),
asks it to run, compares what comes back with what it expects and raises `Fail` with a Chinese reason when the
behaviour is wrong. What can go wrong is told apart, so the table blames the right thing:

    Fail / AssertionError      the student's code ran and did the wrong thing      ✘ 未通过
    Raised                     the student's code raised (NotImplementedError:     ✘ 未通过
                               "还没有实现")
    Hang                       no answer within the time limit: the worker is      ✘ 未通过
                               ended ("超过 N 秒没有返回：是不是死循环？")
    Crashed                    the worker died (os._exit, a crash)                 ✘ 未通过
    anything else              the checker's own bug, never the student's          ⚠ 检查器出错

A probe is the scenario half of a check: code of the checker that builds scripted tools and a simulated clock,
calls the student's object and records what happened. It runs in the referee: the object is a handle to the worker
(calling it inside `simulate` sends the call there), the tools and the clock stay in the referee and the worker
gets stand-ins that ask for them in plain data (_bridge.py, _session.py, _remote.py), so the calls, their
arguments and the waits are counted where the verdict is taken. `@probe` marks one; the Exercise lists them.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Awaitable, Callable

from ..clock import SimulatedClock, use_clock
from ..redaction import safe_str
from ._errors import CheckerError, Crashed, Fail, Hang, Raised
from ._plain import Foreign, describe

__all__ = ["Check", "CheckResult", "Exercise", "Fail", "CheckerError", "Raised", "Hang", "Crashed", "Report",
           "run_check", "probe", "play", "simulate", "expect", "expect_pair", "no_real_sleep", "tool_awaited",
           "MARKS"]

NOT_IMPLEMENTED = "还没有实现"
_NOTHING = object()  # the player's `last` before the student's code returned anything in this check
MARKS = {"pass": "✔ 通过", "fail": "✘ 未通过", "error": "⚠ 检查器出错", "not_run": "○ 未运行"}


def probe(fn: Callable) -> Callable:
    """Mark `fn(obj, **params)` as a probe: referee-side code that runs the student's object and returns plain data."""
    fn.__probe__ = True
    return fn


@dataclass(frozen=True)
class Check:
    """One behaviour to check: id (English, for tests), title and hint (Chinese), the referee-side test."""

    id: str
    title: str
    hint: str
    run: Callable[[Any], None]


@dataclass(frozen=True)
class Exercise:
    """An exercise: number, notebook stem, title, the student's object's name, its checks and its probes."""

    number: str
    stem: str
    title: str
    function: str
    checks: tuple[Check, ...]
    probes: tuple[Callable, ...] = ()

    def __post_init__(self) -> None:
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise ValueError(f"exercise {self.number}: check ids repeat: {ids}")
        for fn in self.probes:
            if not getattr(fn, "__probe__", False):
                raise ValueError(f"exercise {self.number}: {fn.__name__} is listed as a probe without @probe")

    def probe(self, name: str) -> Callable:
        for fn in self.probes:
            if fn.__name__ == name:
                return fn
        raise CheckerError(f"exercise {self.number} has no probe {name!r}")

    def check(self, check_id: str) -> Check:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise ValueError(f"练习 {self.number} 没有检查项 {check_id!r}；可选：{', '.join(c.id for c in self.checks)}")


@dataclass
class CheckResult:
    id: str
    title: str
    passed: bool
    reason: str = ""
    hint: str = ""
    kind: str = "pass"      # pass, fail, todo, raised, hang, crash, error (the checker's), not_run
    printed: str = ""       # what the student's code printed during a failed check (the first lines)


@dataclass
class Report:
    """What one run of an exercise's checks found; `problem` says why none could run, if so."""

    exercise: str
    title: str
    function: str
    results: list[CheckResult] = field(default_factory=list)
    problem: str = ""

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.passed == self.total

    @property
    def started(self) -> bool:
        """False while every check only says "还没有实现" (or none could run)."""
        return any(r.kind not in ("todo", "not_run") for r in self.results)

    def result(self, check_id: str) -> CheckResult:
        for r in self.results:
            if r.id == check_id:
                return r
        raise KeyError(f"exercise {self.exercise} has no check {check_id!r}")

    def failed_ids(self) -> list[str]:
        return [r.id for r in self.results if not r.passed]

    def to_dict(self) -> dict:
        return {"exercise": self.exercise, "title": self.title, "function": self.function, "problem": self.problem,
                "passed": self.passed, "total": self.total, "results": [asdict(r) for r in self.results]}

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        return cls(data["exercise"], data["title"], data["function"],
                   [CheckResult(**r) for r in data["results"]], data.get("problem", ""))

    def render(self, advice: str = "") -> str:
        """The Chinese pass/fail table, with a reason and a hint under each failed row; `advice` ends a table
        with failures (default: edit and run `check(function)` again, as in a notebook)."""
        where = f"第 {self.exercise[2:]} 章" if self.exercise.startswith("ch") else f"练习 {self.exercise}"
        lines = [f"{where} · {self.title}（检查 {self.function}）", ""]
        if self.problem:
            lines += [f"⚠ 检查没有运行：{self.problem}", ""]
        width = max((_width(r.title) for r in self.results), default=10)
        rule = "  " + "─" * min(width + 19, 72)
        lines += [f"  序号  {_pad('结果', 13)}  检查项", rule]
        for n, r in enumerate(self.results, 1):
            mark = MARKS["pass" if r.passed else "error" if r.kind == "error" else
                         "not_run" if r.kind == "not_run" else "fail"]
            lines.append(f"  {n:<4}  {_pad(mark, 13)}  {r.title}")
            if r.passed or r.kind == "not_run":
                continue
            lines.append(f"  {'':<4}  {'':<13}  原因：{r.reason}")
            if r.hint:
                lines.append(f"  {'':<4}  {'':<13}  提示：{r.hint}")
            if r.printed:
                lines.append(f"  {'':<4}  {'':<13}  你的代码打印了：{r.printed}")
        lines.append(rule)
        if self.ok:
            lines.append(f"得分：{self.passed}/{self.total}，全部通过！")
        else:
            lines.append(f"得分：{self.passed}/{self.total}，还有 {self.total - self.passed} 项未通过："
                         f"{advice or f'按提示修改后再运行 check({self.function})'}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(32), *range(127, 160)]} | {
    c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]} | {10: "\\n", 13: "\\r", 9: "\\t"}


def visible(text: str) -> str:
    """`text` as one terminal line: control characters (newline, CR, ESC, bidi) escaped, so none erases or fakes one."""
    return text.translate(_CONTROLS)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


def _printed(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()][:3]
    shown = " ⏎ ".join(lines)
    return shown[:200] + ("…" if len(shown) > 200 or len(text.strip().splitlines()) > 3 else "")


def run_check(check: Check, player: Any) -> CheckResult:
    """Run one check against the player; every outcome becomes a row, never a traceback."""
    def row(kind: str, reason: str, hint: str = check.hint, printed: str = "") -> CheckResult:
        return CheckResult(check.id, check.title, kind == "pass", reason, hint, kind, _printed(printed))

    player.printed, player.last = "", _NOTHING
    try:
        try:
            check.run(player)
        except BaseExceptionGroup as group:  # hypothesis may report several failures at once: show the first
            first = group.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    except Raised as exc:
        if exc.is_a("NotImplementedError"):
            return row("todo", NOT_IMPLEMENTED, f"把 raise NotImplementedError 换成你的代码；{check.hint}")
        return row("raised", f"运行时抛出了异常 {exc}"[:300], printed=exc.printed)
    except (Hang, Crashed) as exc:
        return row("hang" if isinstance(exc, Hang) else "crash", str(exc), printed=player.printed)
    except (Fail, AssertionError) as exc:
        return row("fail", str(exc) or "结果不符合要求", printed=player.printed)
    except KeyboardInterrupt:
        raise
    except CheckerError as exc:
        return row("error", f"检查器自己出错了（不是你的代码的问题，请告诉老师）：{str(exc)[:300]}", hint="")
    except Exception as exc:  # the checker's own mistake: say so, and show what the student's code returned
        last = getattr(player, "last", _NOTHING)
        said = f"；你的函数最后返回的是 {describe(last)}" if last is not _NOTHING else ""
        return row("error", f"检查器自己出错了（不是你的代码的问题，请告诉老师）：{type(exc).__name__}: "
                            f"{str(exc)[:160]}{said}", hint="")
    return row("pass", "")


def expect(value: Any, kind: type | tuple[type, ...], what: str = "应该返回") -> Any:
    """`value` if it is of `kind` (plain types only), else Fail naming what came back."""
    if isinstance(value, kind) and not isinstance(value, Foreign) and not (kind is int and isinstance(value, bool)):
        return value
    names = " 或 ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
    raise Fail(f"{what} {names}，得到 {describe(value)}")


def expect_pair(value: Any) -> tuple[Any, Any]:
    """The (result, error) pair a retry function must return, or a Chinese failure."""
    if not isinstance(value, tuple) or len(value) != 2:
        raise Fail(f"应该返回 (result, error) 二元组，得到 {describe(value)}")
    return value


def no_real_sleep(play: Any) -> None:
    """Fail naming the real wait when the student's code asked for one during the last request."""
    if play.sleeps:
        kind, seconds = play.sleeps[0]
        raise Fail(f"用了真实的 sleep（{kind}({seconds:g})，共 {len(play.sleeps)} 次）：请用 await get_clock().sleep(秒数)，"
                   "它在模拟时钟上等待，不真的等，检查才看得到等了多久")


def tool_awaited(seen: dict) -> None:
    """Fail when the student's code called an async tool without awaiting it (so it never ran)."""
    if seen.get("not_awaited"):
        raise Fail(f"调用了工具 {seen['not_awaited']} 次却没有 await 它返回的协程，工具一次也没有真正执行："
                   "异步工具要 result = tool_fn(...)，再 if inspect.isawaitable(result): result = await result")


# --- helpers for probes -------------------------------------------------------------------------

async def play(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """In a probe: call the student's fn, awaiting the result when it is awaitable (sync and async alike).

    Whatever escapes the student's code becomes Raised, so the referee blames the student's
    code for it, and only for it: an exception anywhere else in a probe is the checker's. `fn` is
    the object in the worker (or something it returned), or a function here run on such objects
    (`play(getattr, obj, "name", default)` reads an attribute in the worker).
    """
    try:
        value = fn(*args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
        return value
    except (Raised, Hang, Crashed, CheckerError):
        raise
    except BaseException as exc:
        names = [k.__name__ for k in type(exc).__mro__ if k not in (object, BaseException)]
        # safe_str: an exception whose __str__ raises is still the student's, never the checker's bug
        raise Raised(names or ["BaseException"], safe_str(exc, 500)) from None


def simulate(make: Callable[[SimulatedClock], Awaitable[Any]], seed: int = 0) -> tuple[Any, SimulatedClock]:
    """Run make(clock) under a fresh simulated clock (seed), in its own thread and event loop.

    The clock is installed inside that loop, so a running loop of the caller and its clock are
    untouched. Inside, calling the student's object (through `play`) sends the call to the worker
    and answers it from here: the worker's sleeps wait on this clock (_bridge.BridgeClock). The
    time limit is the player's: a call that does not answer in time ends its worker (Hang).
    """
    from ._bridge import BridgeClock

    clock = BridgeClock(seed=seed)

    async def body() -> Any:
        with use_clock(clock):
            return await make(clock)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, body()).result(), clock
