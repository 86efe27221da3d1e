"""Running the capstone: one case on any mix of the student's pieces and the toolkit's (run_case), every case three
ways (compare: the toolkit's agent, the student's whole agent, one student piece at a time), and what the student
reads of it (Comparison)."""
from __future__ import annotations

import functools
import inspect
import traceback
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..clock import SimulatedClock, use_clock
from ..executor import ToolExecutor
from ..guard import PluginError, run_plugin
from ..mine import SLOTS, Piece, folder, load, toolkit_piece, where
from .cases import CASES, Case, toolkit_check
from .outcome import UNFINISHED, Outcome, ends, from_part, object_of

__all__ = ["Comparison", "PieceExited", "compare", "run_case"]

MAX_RETRIES = 3  # both executors get the same


def _verdict(value: Any) -> tuple[str, tuple[str, ...]]:
    """A check's verdict in a word (通过 / 不通过 / 没有验收), and its reasons; any return shape a student may choose."""
    if value is None:
        return "没有验收", ()
    ok = value.get("ok") if isinstance(value, Mapping) else getattr(value, "ok", value)
    why = value.get("problems") if isinstance(value, Mapping) else getattr(value, "mismatches", None)
    why = tuple(str(w) for w in why) if isinstance(why, (list, tuple)) else ()
    if ok is True:
        return "通过", ()
    return ("不通过", why) if ok is False else (f"看不懂的结论：{str(value)[:40]}", ())


class PieceExited(Exception):
    """A student's piece called sys.exit() (or raised SystemExit): in the capstone that is the piece's failure."""


def _exited(exc: SystemExit) -> PieceExited:
    return PieceExited(f"你的函数调用了 sys.exit({'' if exc.code is None else repr(exc.code)})：部件出错时应该抛出异常或"
                       "返回错误结果，不能结束整个程序")


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with a SystemExit it raises (or its awaitable raises) turned into PieceExited, the plug-in points'
    PLUGIN_ERROR; its signature kept (functools.wraps: a `next_step` parameter is still seen). A class (an
    executor) is left as it is: what it raises ends its run, and the run says so."""
    if isinstance(fn, type):
        return fn

    async def awaited(value: Any) -> Any:
        try:
            return await value
        except SystemExit as exc:
            raise _exited(exc) from None

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            return await awaited(fn(*args, **kwargs))
        return guarded_async

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            value = fn(*args, **kwargs)
        except SystemExit as exc:
            raise _exited(exc) from None
        return awaited(value) if inspect.isawaitable(value) else value
    return guarded


class _Recorded:
    """The executor as the loop sees it, every ToolResult its run_tool_calls hands on kept in `results`."""

    def __init__(self, executor: Any) -> None:
        self._executor, self.results = executor, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executor, name)

    async def run_tool_calls(self, calls: Any, *args: Any, **kwargs: Any) -> Any:
        results = await self._executor.run_tool_calls(calls, *args, **kwargs)
        self.results.extend(results)
        return results


def _executor(pieces: Mapping[str, Any], registry: Any, limit: int) -> Any:
    """The student's executor class built with their parse, truncate and retry (the toolkit's for a slot they did
    not give), or a ToolExecutor with the pieces given plugged in."""
    if "executor" in pieces:
        return pieces["executor"](registry=registry, max_retries=MAX_RETRIES, result_max_chars=limit,
                                  **{s: pieces.get(s, toolkit_piece(s)) for s in ("parse", "truncate", "retry")})
    return ToolExecutor(registry=registry, max_retries=MAX_RETRIES, result_max_chars=limit,
                        **{s: pieces[s] for s in ("parse", "truncate", "retry") if s in pieces})


def _whose(exc: BaseException, pieces: Mapping[str, Any]) -> str:
    """Which of the student's pieces `exc` came from: the last my_toolkit/ file in its traceback, else the only
    piece of the run that is a class or loop (the code that runs outside the plug-in points), else 'agent'."""
    mine = folder().resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = Path(frame.filename)
        if path.suffix == ".py" and path.parent.resolve() == mine and path.stem in SLOTS:
            return path.stem
    outside = [slot for slot in ("loop", "executor") if slot in pieces]
    return outside[0] if len(outside) == 1 else "agent"


def _status(result: Any) -> str:
    status, code = getattr(result, "status", None), getattr(result, "error_code", None)
    if status is None:
        return f"看不懂的结果（{type(result).__name__}）"
    return f"{status}（{code}）" if status == "error" and code else str(status)


def run_case(case: Case, pieces: Mapping[str, Callable[..., Any]] | None = None) -> Outcome:
    """Run `case` with the given pieces (slot -> function or class) and the toolkit's elsewhere: the student's
    loop when "loop" is given, else run_agent. A piece that raises, exits or returns the wrong thing is that
    piece's error in the outcome, never an exception here (KeyboardInterrupt propagates)."""
    from ..agent import run_agent
    from ..agent.sync import call_plugin, run_sync
    from ..llm import make_client
    from ..tools import default_registry

    pieces = {slot: _guarded(fn) for slot, fn in (pieces or {}).items()}
    answer, messages, results, errors = "", [], [], []
    with case.setup() as given, use_clock(SimulatedClock(seed=0)):
        registry = given.get("registry") or default_registry()
        client, model = (given["client"], given["model"]) if "client" in given else make_client()
        try:
            executor = _Recorded(_executor(pieces, registry, given.get("result_max_chars", 8000)))
            results = executor.results
            if "loop" in pieces:
                returned = run_sync(pieces["loop"](
                    case.question, client, model, executor,
                    format_message=pieces.get("format_message", toolkit_piece("format_message")),
                    evaluate=pieces.get("evaluate", toolkit_piece("evaluate"))))
                if not (isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], list)):
                    raise TypeError(f"应返回 (回答, messages)，返回了 {type(returned).__name__}")
                answer, messages, seen = returned[0] or "", returned[1], results
            else:
                run = run_agent(case.question, client=client, model=model, registry=registry, executor=executor,
                                format_message=pieces.get("format_message"),
                                **({"evaluate": pieces["evaluate"]} if "evaluate" in pieces else {}))
                answer, messages, seen = run.answer, run.messages, run.tool_results  # the loop's refusals too
            errors += [r.error for r in seen if getattr(r, "error_code", None) == "PLUGIN_ERROR"]
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the capstone's boundary: the student's loop or executor, SystemExit too
            errors.append(f"你的 {_whose(exc, pieces)} 出错，这个用例没有跑完（{type(exc).__name__}: {str(exc)[:120]}）")
            verdict, problems = UNFINISHED, ()
        else:
            check = pieces.get("check", functools.partial(toolkit_check, case.question))
            try:
                verdict, problems = run_plugin("check", lambda: _verdict(call_plugin(check, answer, list(results))))
            except PluginError as failed:
                verdict, problems = "插件出错", ()
                errors.append(f"你的 check 出错：{failed.detail}")
    contents = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    return Outcome(tuple(_status(r) for r in results), tuple(c if isinstance(c, str) else str(c) for c in contents),
                   answer, verdict, problems, tuple(dict.fromkeys(str(e) for e in errors)))


@dataclass
class Comparison:
    """Every case run on the toolkit's agent, on the student's whole agent, and with one student piece at a time."""

    pieces: dict[str, Piece]
    toolkit: dict[str, Outcome] = field(default_factory=dict)
    mine: dict[str, Outcome] = field(default_factory=dict)
    single: dict[tuple[str, str], Outcome] = field(default_factory=dict)  # (case key, slot) -> outcome

    @property
    def saved(self) -> list[str]:
        return [slot for slot, piece in self.pieces.items() if piece.ok]

    def failed(self) -> list[str]:
        """The cases the toolkit's agent passes and the student's whole agent does not."""
        return [c.key for c in CASES if self.toolkit[c.key].passed and not self.mine[c.key].passed]

    def differences(self, slot: str) -> dict[str, list[str]]:
        """case key -> what swapping in only the student's `slot` changed (cases where nothing did are left out)."""
        found = {}
        for case in CASES:
            diff = self.single[(case.key, slot)].differs_from(self.toolkit[case.key])
            if diff:
                found[case.key] = diff
        return found

    def pieces_table(self) -> str:
        lines = ["位置            接在                          状态"]
        for slot, piece in self.pieces.items():
            state = f"✔ 已保存（{where(slot)}），用你的" if piece.ok else f"○ {piece.problem}（{where(slot)}）：用 toolkit 的"
            lines.append(f"{slot:<15} {_pad(SLOTS[slot], 28)}  {state}")
        return "\n".join(lines)

    def cases_table(self) -> str:
        """Each case: the toolkit's agent and the student's whole agent side by side, and what differs."""
        lines = []
        for case in CASES:
            yours, theirs = self.mine[case.key], self.toolkit[case.key]
            diff = yours.differs_from(theirs)
            lines.append(f"【{case.title}】{case.what}")
            lines.append(f"  toolkit 的 agent：工具 {' / '.join(theirs.statuses) or '没有调用'}；验收：{theirs.verdict}")
            lines.append(f"  你的 agent：      工具 {' / '.join(yours.statuses) or '没有调用'}；验收：{yours.verdict}")
            lines += ["  ✔ 模型读到的、回答的都一样"] if not diff else [f"  ✘ {d}" for d in diff]
        return "\n".join(lines)

    def summary(self) -> str:
        """What a student acts on first: does their whole agent pass the checks the toolkit's passes, and in
        which cases it went worse than an answer worded differently (a failed check, a failed piece, another
        result from the executor), with the piece that does the same alone."""
        passed, failed = [c for c in CASES if self.toolkit[c.key].passed], self.failed()
        names = "、".join(c.title for c in passed)
        lines = [f"✔ 验收：toolkit 的 agent 通过的 {len(passed)} 个用例（{names}），你的 agent 全部通过" if not failed
                 else f"✘ 验收：toolkit 的 agent 通过的 {len(passed)} 个用例里，你的 agent 有 {len(failed)} 个没通过"]
        worse = [c for c in CASES if self.mine[c.key].severity(self.toolkit[c.key]) >= 2]
        for case in worse:
            lines.append(f"  - {case.title}：{self.mine[case.key].headline(self.toolkit[case.key])}；"
                         f"{self.blame(case.key)}")
        if not worse:
            lines.append("  执行器交给模型的结果也和 toolkit 的一样；其余的不同（字段、措辞）见下面的表")
        return "\n".join(lines)

    def blame(self, case_key: str) -> str:
        """Which saved piece, swapped in alone, went worst in this case (see Outcome.severity), in Chinese."""
        toolkit = self.toolkit[case_key]
        worst = {slot: self.single[(case_key, slot)].severity(toolkit) for slot in self.saved}
        top = max(worst.values(), default=0)
        if top == 0:
            return "只换上一个部件时，模型读到的、回答的都和 toolkit 的一样：是几个部件合在一起才出的问题"
        blamed = [slot for slot, n in worst.items() if n == top]
        alone = self.single[(case_key, blamed[0])]
        what = (alone.headline(toolkit) if top >= 2 else "回答就不一样了")
        same = top >= 2 and what == self.mine[case_key].headline(toolkit)
        return (f"只换上你的 {'、'.join(blamed)} 也是这样" if same else f"只换上你的 {'、'.join(blamed)} 时，{what}") + \
            f"：先看{'、'.join(where(slot) for slot in blamed)}"

    def by_piece(self) -> str:
        if not self.saved:
            return ("还没有保存任何部件：上面全部用的是 toolkit 的部件。第 01–07 章和练习 07 的最后都有一格 "
                    "save(...)，运行它就把你的版本存进 my_toolkit/。")
        titles = {c.key: c.title for c in CASES}
        lines = []
        for slot in self.saved:
            found = self.differences(slot)
            if not found:
                lines.append(f"{slot}：在这 {len(CASES)} 个用例里，模型读到的、回答的都和 toolkit 的一样")
                continue
            lines.append(f"{slot}：在 {len(found)} 个用例里表现不同")
            lines += [f"  - {titles[key]}：{'；'.join(diff)}" for key, diff in found.items()]
        return "\n".join(lines)

    def show(self, case_key: str, slot: str | None = None, width: int = 160) -> str:
        """One case side by side: what differs first, then the toolkit's run and the student's (their whole
        agent, or only `slot` swapped in), each tool message as the model read it and the answer, cut to their
        head and tail so a difference at either end shows."""
        case = next((c for c in CASES if c.key == case_key), None)
        if case is None:
            raise ValueError(f"没有叫 {case_key!r} 的用例：请从这些用例里选：{', '.join(c.key for c in CASES)}")
        if slot is not None and (case_key, slot) not in self.single:
            saved = "、".join(self.saved) or "（还没有保存任何部件）"
            raise ValueError(f"{slot!r} 不是你已保存的部件：请从已保存的部件里选（{saved}），或先保存它")
        yours = self.mine[case_key] if slot is None else self.single[(case_key, slot)]
        diff = yours.differs_from(self.toolkit[case_key])
        lines = [f"【{case.title}】{case.question}", "不同的地方：" + ("；".join(diff) if diff else "没有")]
        toolkit = self.toolkit[case_key]
        for who, outcome, other in (("toolkit 的 agent", toolkit, yours),
                                    ("你的 agent" if slot is None else f"只换上你的 {slot}", yours, toolkit)):
            lines.append(f"— {who} —")
            for i, message in enumerate(outcome.messages, 1):
                there = other.messages[i - 1] if i <= len(other.messages) else None
                same = there is None or message == there or object_of(message) == object_of(there) is not None
                lines.append(f"  tool 消息 {i}：{ends(message, width) if same else from_part(message, there, width)}")
            answer = (ends(outcome.answer, width) if outcome.answer == other.answer
                      else from_part(outcome.answer, other.answer, width))
            lines.append(f"  回答：{answer or '（没有回答）'}")
        return "\n".join(lines)


def _pad(text: str, width: int) -> str:
    """`text` padded to `width` columns, a Chinese character taking two."""
    return text + " " * max(width - sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text), 0)


def compare(pieces: Mapping[str, Piece] | None = None) -> Comparison:
    """Run every case on the toolkit's agent, on the student's whole agent (their saved pieces, default
    `toolkit.mine.load()`; the toolkit's in the slots they did not save), and with each saved piece alone;
    never raises for what a piece does."""
    found = dict(pieces) if pieces is not None else load()
    mine = {slot: piece.fn for slot, piece in found.items() if piece.ok and piece.fn is not None}
    result = Comparison(found)
    for case in CASES:
        result.toolkit[case.key] = run_case(case)
        result.mine[case.key] = run_case(case, mine) if mine else result.toolkit[case.key]
        for slot, fn in mine.items():
            result.single[(case.key, slot)] = (run_case(case, {slot: fn}) if len(mine) > 1
                                               else result.mine[case.key])
    return result
