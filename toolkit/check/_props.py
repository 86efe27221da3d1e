"""Property checks that must show they exercise what they claim: hypothesis examples plus required coverage.

    property_check(st.tuples(texts, budgets), test, examples=80,
                   classify=lambda ex: {"needs a cut"} if len(ex[0]) > ex[1] else set(),
                   cover={"needs a cut": 40})

runs `test(example)` on `examples` deterministic hypothesis examples (derandomized,
no database: the same examples on every run and every machine), then counts how
many generated examples carried each label and requires at least `cover[label]`.
A property whose generator drifts (say, no text is ever longer than the budget)
does not pass quietly: it fails as the checker's own error, which the test suite
catches on the solutions. A failing example is shrunk by hypothesis first, for at
most MAX_SHRINK_STEPS more examples (each is a call in the worker: unbounded shrinking made a
wrong answer's press take 10-20 s); the student's exception on an example becomes a Fail that
shows the example.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping

from ._core import CheckerError, Fail, Raised

__all__ = ["property_check"]

MAX_SHRINK_STEPS = 40  # examples hypothesis may try after the first failure, shrinking it (each one is a call)


def property_check(strategy: Any, test: Callable[[Any], None], *, examples: int,
                   cover: Mapping[str, int], classify: Callable[[Any], Iterable[str]]) -> dict[str, int]:
    """Run the property on `examples` examples; returns the label counts (CheckerError if coverage is short)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis.reporting import with_reporter

    if not cover:
        raise CheckerError("a property check must say what its examples cover (cover={label: minimum})")
    seen: Counter = Counter()
    failed: list = []  # the latest (smallest so far) failure, once there is one
    after = [0]        # examples tried since the first failure (each one a round trip to the worker)

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(example: Any) -> None:
        if failed:
            after[0] += 1
            if after[0] > MAX_SHRINK_STEPS:
                raise _Stop(failed[-1])  # small enough to read: a wrong answer's press stays quick
        seen.update(set(classify(example)))
        try:
            test(example)
        except Raised as exc:
            if exc.is_a("NotImplementedError"):
                raise _Stop(exc) from None  # a stub: nothing to shrink
            failed.append(Fail(f"输入 {_show(example)} 时运行出错：{exc}"))
            raise failed[-1] from None
        except (Fail, AssertionError) as exc:
            failed.append(exc)
            raise

    try:
        with with_reporter(lambda _message: None):
            prop()
    except _Stop as stop:
        raise stop.args[0] from None
    short = [f"「{label}」只有 {seen[label]} 个（至少要 {need} 个）" for label, need in cover.items() if seen[label] < need]
    if short:
        raise CheckerError("随机用例没有覆盖到这项检查要测的情况：" + "；".join(short))
    return dict(seen)


class _Stop(BaseException):
    """Ends the property at once (hypothesis does not catch BaseException)."""


def _show(example: Any) -> str:
    text = repr(example)
    return text if len(text) <= 120 else text[:117] + "…"
