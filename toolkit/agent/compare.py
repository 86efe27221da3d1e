"""Does the [TASK_CONTEXT] block help the model in .env? The same multi-step question, with and without it.

The offline stand-in model is written to move on to a task's next step only when a tool message carries the
block, so comparing it with itself measures nothing. `compare_task_context` runs the comparison only against
a real endpoint (the settings `toolkit.llm.load_settings()` reads from .env and the environment) and, offline,
returns a result that says in one line that it was skipped. A chapter calls it the same way in both cases.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..task_context import split_steps
from .loop import run_agent
from .record import AgentRun

__all__ = ["TaskContextComparison", "compare_task_context", "all_steps_done"]

SKIPPED_OFFLINE = ("没有在 .env 里配置真实模型，现在回答的是离线替身模型：它被写成看到 [TASK_CONTEXT] 才做下一步，"
                   "和它自己比没有意义")


@dataclass(frozen=True)
class TaskContextComparison:
    """How many of `runs` runs finished every step without the block and with it; or why it was skipped."""

    model: str
    runs: int
    without: int = 0
    with_context: int = 0
    skipped: str | None = None

    def __str__(self) -> str:
        if self.skipped is not None:
            return f"已跳过：{self.skipped}"
        return (f"模型 {self.model}，每种 {self.runs} 次：不加 [TASK_CONTEXT] 完成全部步骤 {self.without} 次，"
                f"加上后 {self.with_context} 次")


def all_steps_done(run: AgentRun) -> bool:
    """The default verdict: the run answered, and the different tools it called successfully are at least as
    many as its question has steps (toolkit.task_context.split_steps)."""
    steps = split_steps(run.question) or [run.question]
    called = {result.name for result in run.tool_results if result.ok}
    return run.ok and len(called) >= len(steps)


def compare_task_context(question: str, *, runs: int = 3, done: Callable[[AgentRun], bool] = all_steps_done,
                         settings: Any = None, **run_kwargs: Any) -> TaskContextComparison:
    """Run `question` `runs` times without the task context and `runs` times with it, against the configured
    model, counting the runs `done` accepts (default `all_steps_done`).

    settings: a toolkit.llm.Settings (default: `load_settings()`, from .env and the environment). Offline
    settings run nothing and return a comparison whose str says, in one line, that it was skipped.
    run_kwargs go to run_agent (registry, max_turns, ...). A failing run counts as not done; never raises for
    what the model does. Raises ValueError for runs < 1 and toolkit.llm.ConfigError for a bad .env.
    """
    if not isinstance(runs, int) or isinstance(runs, bool) or runs < 1:
        raise ValueError(f"runs 是每种方式各跑几次，应该是不小于 1 的整数，收到的是 {runs!r}")
    from ..llm import load_settings, make_client

    settings = load_settings() if settings is None else settings
    if settings.offline:
        return TaskContextComparison(settings.model, runs, skipped=SKIPPED_OFFLINE)
    client, model = make_client(settings)

    def count(task_context: bool) -> int:
        return sum(bool(done(run_agent(question, client=client, model=model, task_context=task_context,
                                       **run_kwargs))) for _ in range(runs))

    return TaskContextComparison(model, runs, without=count(False), with_context=count(True))
