"""The checker's machinery: a Check, its result, a Report and how a report is printed.

A check is a small function that receives the student's object and raises
`Fail` (or AssertionError) with a Chinese reason when the behaviour is wrong.
Whatever the student's code raises is caught here and becomes a failed row:
NotImplementedError reads "还没有实现", anything else names the exception.
No traceback ever reaches the student.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ..clock import SimulatedClock, use_clock

__all__ = ["Check", "CheckResult", "Exercise", "Fail", "Report", "run_checks", "call_maybe_async", "simulate"]

NOT_IMPLEMENTED = "还没有实现"
REAL_TIMEOUT = 10.0  # real seconds a simulated-time check may take before it counts as hanging


class Fail(Exception):
    """Raised by a check: the student's code ran but did the wrong thing (message in Chinese)."""


@dataclass(frozen=True)
class Check:
    """One behaviour to check: id (English, for tests), title and hint (Chinese), the test itself."""

    id: str
    title: str
    hint: str
    run: Callable[[Any], None]


@dataclass(frozen=True)
class Exercise:
    """An exercise: its number, notebook stem, title, the name the student's object has, its checks."""

    number: str
    stem: str
    title: str
    function: str
    checks: tuple[Check, ...]


@dataclass
class CheckResult:
    id: str
    title: str
    passed: bool
    reason: str = ""
    hint: str = ""


@dataclass
class Report:
    """What one run of an exercise's checks found."""

    exercise: str
    title: str
    function: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def result(self, check_id: str) -> CheckResult:
        for r in self.results:
            if r.id == check_id:
                return r
        raise KeyError(f"exercise {self.exercise} has no check {check_id!r}")

    def failed_ids(self) -> list[str]:
        return [r.id for r in self.results if not r.passed]

    def to_dict(self) -> dict:
        return {"exercise": self.exercise, "title": self.title, "function": self.function,
                "passed": self.passed, "total": self.total,
                "results": [r.__dict__ for r in self.results]}

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        return cls(data["exercise"], data["title"], data["function"],
                   [CheckResult(**r) for r in data["results"]])

    def render(self) -> str:
        """The Chinese pass/fail table, with a reason and a hint under each failed row."""
        lines = [f"练习 {self.exercise} · {self.title}（检查 {self.function}）", ""]
        width = max((_width(r.title) for r in self.results), default=10)
        lines.append(f"  序号  {_pad('结果', 9)}  检查项")
        lines.append("  " + "─" * min(width + 17, 70))
        for n, r in enumerate(self.results, 1):
            mark = "✅ 通过" if r.passed else "❌ 未通过"
            lines.append(f"  {n:<4}  {_pad(mark, 9)}  {r.title}")
            if not r.passed:
                lines.append(f"  {'':<4}  {'':<9}  原因：{r.reason}")
                lines.append(f"  {'':<4}  {'':<9}  提示：{r.hint}")
        lines.append("  " + "─" * min(width + 17, 70))
        if self.ok:
            lines.append(f"得分：{self.passed}/{self.total}，全部通过！🎉")
        else:
            lines.append(f"得分：{self.passed}/{self.total}，还有 {self.total - self.passed} 项未通过："
                         f"按提示修改后再运行 check({self.function})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def run_check(check: Check, obj: Any) -> CheckResult:
    """Run one check; every exception becomes a failed row with a reason, never a traceback."""
    try:
        try:
            check.run(obj)
        except BaseExceptionGroup as group:  # hypothesis may report several failures at once: show the first
            first = group.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            if isinstance(first, Exception):
                raise first from None
            raise
    except NotImplementedError:
        return CheckResult(check.id, check.title, False, NOT_IMPLEMENTED,
                           f"把 raise NotImplementedError 换成你的代码；{check.hint}")
    except (Fail, AssertionError) as exc:
        return CheckResult(check.id, check.title, False, str(exc) or "结果不符合要求", check.hint)
    except Exception as exc:  # the student's code raised: name it, keep going
        return CheckResult(check.id, check.title, False, f"运行时抛出了异常 {_describe(exc)}", check.hint)
    return CheckResult(check.id, check.title, True)


def run_checks(obj: Any, exercise: Exercise) -> Report:
    """Run every check of `exercise` against `obj`; returns the Report."""
    return Report(exercise.number, exercise.title, exercise.function,
                  [run_check(c, obj) for c in exercise.checks])


# --- helpers for checks --------------------------------------------------------------

async def call_maybe_async(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call fn and await the result when it is awaitable (sync and async student functions alike)."""
    value = fn(*args, **kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


def simulate(make: Callable[[SimulatedClock], Awaitable[Any]], seed: int = 0) -> tuple[Any, SimulatedClock]:
    """Run make(clock) under a fresh SimulatedClock(seed) in its own thread and event loop.

    The clock is installed inside that loop, so a notebook's running loop and
    its clock are untouched. A run longer than REAL_TIMEOUT real seconds fails:
    the student's code is waiting in real time (asyncio.sleep / time.sleep).
    """
    clock = SimulatedClock(seed=seed)

    async def body() -> Any:
        with use_clock(clock):
            task = asyncio.ensure_future(make(clock))
            done, _ = await asyncio.wait({task}, timeout=REAL_TIMEOUT)
            if not done:
                task.cancel()
                raise _Hang
            return task.result()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(asyncio.run, body()).result(), clock
        except _Hang:
            raise Fail(f"超过 {REAL_TIMEOUT:g} 秒（真实时间）还没有结束：是不是用了 asyncio.sleep / time.sleep？"
                       "请用 get_clock().sleep(秒数)，它在模拟时钟上等待") from None


class _Hang(Exception):
    """A simulated-time run that did not finish in real time."""
