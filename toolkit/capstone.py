"""The capstone: the sales agent run on the student's own pieces, side by side with the toolkit's.

`toolkit.mine.load()` gives the pieces a student saved in the chapters and exercises; `compare(pieces)` runs
each fault case of `CASES` (timeouts, a bad CSV row, a result over its budget, a model that invents figures)
three ways: on the toolkit's pieces, on all of the student's pieces, and once per saved piece with only that
piece swapped in. A difference is then attributed to the piece that made it. What is compared is what the
student can see: the tool messages the model read, the answer, the answer check's verdict, and any
`PLUGIN_ERROR` (a broken piece is an error result for that piece, never a crashed kernel).

Every run uses the client from `toolkit.llm.make_client()` (offline unless .env names a model), except the
invented-figures case, which always uses the offline model's variant that invents them: a real model does
not misbehave on request.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .clock import SimulatedClock, use_clock
from .executor import ToolExecutor
from .mine import SLOTS, Piece

__all__ = ["CASES", "Case", "Comparison", "Outcome", "PieceExited", "compare", "run_case"]

_FAULTS = Path(__file__).resolve().parent.parent / "data" / "faults" / "sales"
SALES_QUESTION = "哪个类别的销售额最高？总销售额是多少？"


@dataclass(frozen=True)
class Case:
    """One fault case: a question, what goes wrong (Chinese), and what each run gets (registry, budget, model)."""

    key: str
    title: str
    question: str
    what: str
    setup: Callable[[], contextlib.AbstractContextManager[dict]]


@contextlib.contextmanager
def _plain() -> Iterator[dict]:
    yield {}


def _times_out(fn: Callable[..., Any], times: int) -> Callable[..., Any]:
    """`fn` whose first `times` calls raise TimeoutError: a plain function, so a student's plain retry works."""
    calls = 0

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls <= times:
            raise TimeoutError(f"第 {calls} 次调用超时")
        return fn(*args, **kwargs)
    return tool


@contextlib.contextmanager
def _timeouts() -> Iterator[dict]:
    from .tools import default_registry

    registry = default_registry()
    tool = registry.get("analyze_sales_csv")
    assert tool is not None
    registry.add(dataclasses.replace(tool, fn=_times_out(tool.fn, 2)))
    yield {"registry": registry}


@contextlib.contextmanager
def _bad_row() -> Iterator[dict]:
    from .tools import default_registry

    with tempfile.TemporaryDirectory(prefix="capstone-") as folder:
        shutil.copy(_FAULTS / "quantity_abc.csv", Path(folder) / "sales.csv")
        yield {"registry": default_registry(data_dir=folder)}


REPORT = "\n".join(["季度销售报告", "说明：逐笔记录如下。"]
                   + [f"第 {i:03d} 笔：{('键盘', '鼠标', '显示器')[i % 3]} {i % 7 + 1} 件" for i in range(1, 121)]
                   + ["结论：销售额最高的类别是显示器（4495）。", "总计：9692"])


@contextlib.contextmanager
def _long_report() -> Iterator[dict]:
    from .registry import ToolRegistry

    registry = ToolRegistry()
    registry.register(lambda: REPORT, name="read_report", description="读取本季度销售报告的全文", kind="read",
                      parameters={"type": "object", "properties": {}, "additionalProperties": False})
    yield {"registry": registry, "result_max_chars": 400}


@contextlib.contextmanager
def _inventing_model() -> Iterator[dict]:
    from .llm import Settings, make_client

    client, model = make_client(Settings(base_url=None, model="offline-stand-in:ignore-results", offline=True))
    yield {"client": client, "model": model}


CASES: tuple[Case, ...] = (
    Case("plain", "一切正常", SALES_QUESTION, "工具正常返回：两边应该一样", _plain),
    Case("timeouts", "工具连续超时两次", SALES_QUESTION, "analyze_sales_csv 前两次超时，第三次才成功", _timeouts),
    Case("bad_row", "CSV 第 4 行坏了", SALES_QUESTION, "sales.csv 第 4 行的数量是 abc", _bad_row),
    Case("long", "报告太长", "读一下销售报告，总计是多少？", f"报告全文 {len(REPORT)} 字符，预算 400；总计在最后一行",
         _long_report),
    Case("invented", "模型编造数字", SALES_QUESTION, "模型无视工具结果、自己编数字（离线模型的犯错变体）",
         _inventing_model),
)


_TOTAL_WORDS = ("总计", "合计", "总额", "总销售额", "一共", "总共")


def _toolkit_check(question: str, answer: str, results: list) -> Any:
    """check_answer with the question: every number from the tools, and a question that asks for a total
    (总计是多少) needs a total in the answer when the tools succeeded (a dump cut before the total fails)."""
    from .claims import total_claims
    from .verify import check_answer

    if not results:
        return None
    verdict = check_answer(answer, *results, question=question)
    if any(word in question for word in _TOTAL_WORDS) and all(r.ok for r in results) and not total_claims(answer):
        return dataclasses.replace(verdict, ok=False, mismatches=[*verdict.mismatches, "问题问的是总计，回答里没有给出总计"])
    return verdict


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _verdict(value: Any) -> str:
    """A check's verdict in a word: 通过 / 不通过 / 没有验收; any return shape a student may choose."""
    if value is None:
        return "没有验收"
    ok = value.get("ok") if isinstance(value, Mapping) else getattr(value, "ok", value)
    return "通过" if ok is True else "不通过" if ok is False else f"看不懂的结论：{str(value)[:40]}"


@dataclass(frozen=True)
class Outcome:
    """What one run shows the student: tool messages as the model read them, the answer, the verdict."""

    messages: tuple[str, ...]
    statuses: tuple[str, ...]
    answer: str
    verdict: str
    plugin_errors: tuple[str, ...] = ()

    def differs_from(self, other: "Outcome") -> list[str]:
        """What differs from `other`, in Chinese, most telling first."""
        found = []
        if self.plugin_errors:
            found.append("插件出错：" + "；".join(_short(e) for e in self.plugin_errors))
        if self.statuses != other.statuses:
            found.append(f"工具结果 {' / '.join(self.statuses)}（toolkit：{' / '.join(other.statuses)}）")
        if self.messages != other.messages and not self.plugin_errors:  # a different status says enough
            found.append(_message_reason(self.messages, other.messages) if self.statuses == other.statuses
                         else "模型读到的 tool 消息不同")
        if self.verdict != other.verdict:
            found.append(f"验收：{self.verdict}（toolkit：{other.verdict}）")
        if self.answer != other.answer:
            found.append("回答不同")
        return found


class PieceExited(Exception):
    """A student's piece called sys.exit() (or raised SystemExit): in the capstone that is the piece's failure."""


def _exited(exc: SystemExit) -> PieceExited:
    return PieceExited(f"你的函数调用了 sys.exit({'' if exc.code is None else repr(exc.code)})：部件出错时应该抛出异常或"
                       "返回错误结果，不能结束整个程序")


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with a SystemExit it raises (or its awaitable raises) turned into PieceExited, the plug-in points'
    PLUGIN_ERROR; its signature kept (functools.wraps: a `next_step` parameter is still seen)."""
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


def _object(message: str) -> dict | None:
    """A tool message's content as a JSON object ([TASK_CONTEXT] block left out), or None."""
    from .task_context import split_task_context

    try:
        value = json.loads(split_task_context(message)[1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _tail(value: Any, size: int = 14) -> str:
    flat = " ".join((value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).split())
    return flat if len(flat) <= size else "…" + flat[-size:]


def _message_reason(mine: tuple[str, ...], theirs: tuple[str, ...]) -> str:
    """Why the tool messages differ, in Chinese: the fields one has and the other lacks, the decision, the
    end of the result (where a cut shows)."""
    if len(mine) != len(theirs):
        return f"模型读到 {len(mine)} 条 tool 消息（toolkit：{len(theirs)} 条）"
    a, b = next(((x, y) for x, y in zip(mine, theirs) if x != y), ("", ""))
    yours, toolkit = _object(a), _object(b)
    if yours is None or toolkit is None:
        return "模型读到的 tool 消息不同" + ("：你的不是 JSON 对象" if yours is None and toolkit is not None else "")
    parts = []
    missing = [k for k in toolkit if k not in yours]
    if missing:
        parts.append(f"少了 {'、'.join(missing)}")
    extra = [k for k in yours if k not in toolkit]
    if extra:
        parts.append(f"多了 {'、'.join(extra)}")
    mine_d, theirs_d = yours.get("decision"), toolkit.get("decision")
    if mine_d != theirs_d and isinstance(mine_d, dict) and isinstance(theirs_d, dict):
        actions = (mine_d.get("action"), theirs_d.get("action"))
        parts.append(f"决定是 {actions[0]}（toolkit：{actions[1]}）" if actions[0] != actions[1] else
                     f"决定的建议不同（你的：{_short(str(mine_d.get('suggestion')), 24)}）")
    if yours.get("result") != toolkit.get("result") and "result" in yours and "result" in toolkit:
        parts.append(f"结果的结尾是「{_tail(yours['result'])}」（toolkit：「{_tail(toolkit['result'])}」）")
    return "模型读到的 tool 消息" + ("：" + "，".join(parts) if parts else "不同")


def run_case(case: Case, pieces: Mapping[str, Callable[..., Any]] | None = None) -> Outcome:
    """Run `case` with the given pieces (slot -> function) in their plug-in points, the toolkit's elsewhere.
    A piece that calls sys.exit() is a PLUGIN_ERROR for that piece, like one that raises."""
    from .agent import run_agent
    from .tools import default_registry

    pieces = {slot: _guarded(fn) for slot, fn in (pieces or {}).items()}
    with case.setup() as given, use_clock(SimulatedClock(seed=0)):
        registry = given.get("registry") or default_registry()
        executor = ToolExecutor(registry=registry, result_max_chars=given.get("result_max_chars", 8000),
                                **{s: pieces[s] for s in ("parse", "truncate", "retry") if s in pieces})
        extra = {k: given[k] for k in ("client", "model") if k in given}
        run = run_agent(case.question, registry=registry, executor=executor,
                        format_message=pieces.get("format_message"),
                        **({"evaluate": pieces["evaluate"]} if "evaluate" in pieces else {}),
                        check=pieces.get("check", functools.partial(_toolkit_check, case.question)), **extra)
    errors = [r.error for r in run.tool_results if r.error_code == "PLUGIN_ERROR"]
    if run.error and run.error.startswith("插件 check 出错"):
        errors.append(run.error)
    return Outcome(tuple(m["content"] for m in run.messages if m.get("role") == "tool"),
                   tuple(r.status if r.ok else f"{r.status}（{r.error_code}）" for r in run.tool_results),
                   run.answer, _verdict(run.check) if not errors or run.check is not None else "插件出错",
                   tuple(dict.fromkeys(e or "" for e in errors)))


@dataclass
class Comparison:
    """Every case run on the toolkit's pieces, on the student's, and with one student piece at a time."""

    pieces: dict[str, Piece]
    toolkit: dict[str, Outcome] = field(default_factory=dict)
    mine: dict[str, Outcome] = field(default_factory=dict)
    single: dict[tuple[str, str], Outcome] = field(default_factory=dict)  # (case key, slot) -> outcome

    @property
    def saved(self) -> list[str]:
        return [slot for slot, piece in self.pieces.items() if piece.ok]

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
            state = "✔ 已保存，用你的" if piece.ok else f"○ {piece.problem}：用 toolkit 的"
            lines.append(f"{slot:<15} {SLOTS[slot]:<28}  {state}")
        return "\n".join(lines)

    def cases_table(self) -> str:
        lines = []
        for case in CASES:
            yours, theirs = self.mine[case.key], self.toolkit[case.key]
            diff = yours.differs_from(theirs)
            lines.append(f"【{case.title}】{case.what}")
            lines.append(f"  toolkit 的部件：工具 {' / '.join(theirs.statuses) or '没有调用'}；验收：{theirs.verdict}")
            lines.append(f"  你的部件：      工具 {' / '.join(yours.statuses) or '没有调用'}；验收：{yours.verdict}")
            lines.append("  " + ("✔ 结果一样" if not diff else "✘ " + "；".join(diff)))
        return "\n".join(lines)

    def by_piece(self) -> str:
        if not self.saved:
            return ("还没有保存任何部件：上面全部用的是 toolkit 的部件。第 01–05 章和练习 07 的最后都有一格 "
                    "save(...)，运行它就把你的版本存进 my_toolkit/。")
        titles = {c.key: c.title for c in CASES}
        lines = []
        for slot in self.saved:
            found = self.differences(slot)
            if not found:
                lines.append(f"{slot}：在这 {len(CASES)} 个用例里和 toolkit 的表现一样")
                continue
            lines.append(f"{slot}：在 {len(found)} 个用例里表现不同")
            lines += [f"  - {titles[key]}：{'；'.join(diff)}" for key, diff in found.items()]
        return "\n".join(lines)


    def show(self, case_key: str, slot: str | None = None, width: int = 160) -> str:
        """The tool messages and the answer of one case: the toolkit's run beside the student's (all their
        pieces, or only `slot`), each message cut to its head and tail so a difference at either end shows."""
        case = next((c for c in CASES if c.key == case_key), None)
        if case is None:
            raise ValueError(f"没有叫 {case_key!r} 的用例；可选：{', '.join(c.key for c in CASES)}")
        if slot is not None and (case_key, slot) not in self.single:
            saved = "、".join(self.saved) or "（还没有保存任何部件）"
            raise ValueError(f"{slot!r} 不是你已保存的部件；已保存：{saved}")
        yours = self.mine[case_key] if slot is None else self.single[(case_key, slot)]
        label = "你的部件" if slot is None else f"只换上你的 {slot}"
        lines = [f"【{case.title}】{case.question}"]
        for who, outcome in (("toolkit 的部件", self.toolkit[case_key]), (label, yours)):
            lines.append(f"— {who} —")
            for i, message in enumerate(outcome.messages, 1):
                status, body = _read(message)
                lines.append(f"  tool 消息 {i}（{status}）：{_ends(body, width)}")
            lines.append(f"  回答：{_ends(outcome.answer, width)}")
        return "\n".join(lines)


def _read(message: str) -> tuple[str, str]:
    """(status, what the model reads of the result) of a tool message: its result, or its error, as text."""
    try:
        value = json.loads(message)
    except ValueError:
        return "文本", message
    if not isinstance(value, dict):
        return "JSON", message
    body = value.get("result") if value.get("result") is not None else value.get("error")
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return str(value.get("status", "?")), text


def _ends(text: str, width: int) -> str:
    """`text` on one line, its head and tail kept when it is longer than `width`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else f"{flat[:width // 2]} …… {flat[-(width // 2):]}"


def compare(pieces: Mapping[str, Piece] | None = None) -> Comparison:
    """Run every case on the toolkit's pieces, on the student's saved ones (default: `toolkit.mine.load()`),
    and with each saved piece alone; never raises for what a piece does."""
    from .mine import load

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
