"""What chapter 10 and exercise 10 check of a student's clearing function, in either wire format.

Histories are built here, seeded, like a long run's: turns of one or two tool calls, results of a few hundred
to a few thousand characters, some with a read_more handle. The probe `clear_run` calls the student's function
in the worker on a copy it keeps, so a function that edits the list it was given is seen doing it. The checks
state rules every valid solution keeps, whatever its placeholder says: over the budget only when every old
result that may be cleared was; no more cleared than the budget needs (with the newest cleared one put back the
results would be over it again); the newest kept; oldest first; a placeholder shorter than what it replaces.
"""
from __future__ import annotations

import copy
import json
import random
from typing import Any, Iterator

from ..clearing import tool_results
from ._core import Fail, play, probe, simulate

TOOLS = ("query_orders", "read_more", "get_weather", "send_notice")


def results_chars(messages: list, fmt: str) -> int:
    return sum(r.size for r in tool_results(messages, fmt))


def budget_for(total: int, spec: float | int) -> int:
    """A case's budget: `spec` as a share of the results' size (a float), or that size less `spec` characters."""
    return int(total * spec) if isinstance(spec, float) else total - spec


def history(fmt: str, seed: int, turns: int = 8, parallel: bool = True) -> list[dict]:
    """A seeded conversation in `fmt` ("openai_chat" or "anthropic")."""
    rng = random.Random(seed)
    messages: list[dict] = [{"role": "user", "content": "把 4 月已支付的订单逐位通知客户"}]
    n = 0
    for _ in range(turns):
        calls = []
        for _ in range(rng.choice((1, 2)) if parallel else 1):
            n += 1
            body: dict[str, Any] = {"status": "success", "result": "记录" * rng.randint(100, 900)}
            if rng.random() < 0.4:
                body = {"status": "success", "more": {"result_id": n}, "result": body["result"]}
            calls.append((f"call_{seed}_{n}", rng.choice(TOOLS), json.dumps({"n": n}),
                          json.dumps(body, ensure_ascii=False)))
        if fmt == "openai_chat":
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [{"id": i, "type": "function", "function": {"name": t, "arguments": a}}
                                            for i, t, a, _ in calls]})
            messages += [{"role": "tool", "tool_call_id": i, "content": c} for i, _, _, c in calls]
        else:
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": t,
                                                               "input": json.loads(a)} for i, t, a, _ in calls]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": c}
                                                         for i, _, _, c in calls]})
    return messages


@probe
def clear_run(fn: Any, *, messages: list, args: tuple = (), kwargs: dict | None = None) -> dict:
    """Probe: fn(messages, *args, **kwargs) on a copy; what it returned and whether it changed its input."""
    given = copy.deepcopy(messages)

    async def go(clock: Any) -> Any:
        return await play(fn, given, *args, **(kwargs or {}))

    return {"out": simulate(go)[0], "mutated": given != messages}


def skeleton(messages: Any) -> Any:
    """The list with every result's content taken out: what clearing must leave as it was."""
    if not isinstance(messages, list):
        return messages
    out = []
    for m in messages:
        if not isinstance(m, dict):
            out.append(m)
            continue
        m = copy.deepcopy(m)
        if m.get("role") == "tool":
            m["content"] = None
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    b["content"] = None
        out.append(m)
    return out


def cleared_list(run: dict, messages: list) -> list:
    out = run["out"]
    if not isinstance(out, list) or not all(isinstance(m, dict) for m in out):
        raise Fail(f"应返回新的消息列表（list of dict），实际返回了 {type(out).__name__}")
    return out


def check_pairs(run: dict, messages: list, fmt: str) -> None:
    out = cleared_list(run, messages)
    if len(out) != len(messages):
        raise Fail(f"消息条数变了：{len(messages)} → {len(out)}。删掉 tool 消息会让 assistant 的 tool_calls 找不到结果，"
                   "API 会拒绝（400）；只替换结果的内容")
    if skeleton(out) != skeleton(messages):
        raise Fail("除了工具结果的内容，别的也变了（id、顺序、tool_calls 或别的消息）：模型靠 id 对上调用和结果，这些都不能动")


def _aligned(run: dict, messages: list, fmt: str) -> tuple[list, list]:
    """(results before, results after), Fail when their number changed (the pairing is broken)."""
    out = cleared_list(run, messages)
    before, after = tool_results(messages, fmt), tool_results(out, fmt)
    if [r.call_id for r in before] != [r.call_id for r in after]:
        raise Fail(f"工具结果从 {len(before)} 个变成了 {len(after)} 个（或 id 变了）：先保证每个调用都还有它的结果，"
                   "只替换内容")
    return before, after


def check_budget(run: dict, messages: list, fmt: str, budget: int, keep_last: int, exempt: tuple = ()) -> None:
    before, after = _aligned(run, messages, fmt)
    total = sum(r.size for r in after)
    if total <= budget:
        return
    protected = set(range(max(len(before) - keep_last, 0), len(before))) if keep_last else set()
    left = [b for i, (b, a) in enumerate(zip(before, after))
            if i not in protected and b.name not in exempt and a.size == b.size]
    if left:
        raise Fail(f"budget_chars={budget}：清除后工具结果一共还有 {total} 字符，超出预算，"
                   f"可还有 {len(left)} 个能清的旧结果没清（最旧的是 {left[0].call_id}，{left[0].size} 字符）")


def check_stops_at_budget(run: dict, messages: list, fmt: str, budget: int, keep_last: int,
                          exempt: tuple = ()) -> None:
    """Nothing cleared within the budget, and clearing stopped as soon as the results fitted: with the newest
    cleared result put back, they would be over the budget again. Judged only when the cleared ones are the
    oldest (another order is check_oldest_first's to report, and "stopped early" means nothing there)."""
    before, after = _aligned(run, messages, fmt)
    changed = [i for i, (b, a) in enumerate(zip(before, after)) if a.size != b.size]
    if not changed:
        return
    candidates = [i for i, b in enumerate(before[:max(len(before) - keep_last, 0)]) if b.name not in exempt]
    if any(i < changed[-1] and i not in changed for i in candidates):
        return
    first = sum(b.size for b in before)
    if first <= budget:
        raise Fail(f"budget_chars={budget}：所有结果一共 {first} 字符，本来就没超预算，却清除了 {len(changed)} 个："
                   "没超预算时应原样返回")
    last, total = changed[-1], sum(a.size for a in after)
    back = total - after[last].size + before[last].size
    if back <= budget:
        raise Fail(f"budget_chars={budget}：清除了 {len(changed)} 个结果，可不清最后那个 {before[last].call_id}，"
                   f"结果一共 {back} 字符，已经在预算之内：清到不超过预算就该停，多清的结果模型还用得上")


def check_keeps_last(run: dict, messages: list, fmt: str, keep_last: int) -> None:
    before, after = _aligned(run, messages, fmt)
    for b, a in list(zip(before, after))[len(before) - keep_last:]:
        if a.size != b.size or a.cleared:
            raise Fail(f"最后 {keep_last} 个结果应原样保留，{b.call_id}（{b.name}）被改了：模型最需要的往往是刚拿到的结果")


def check_oldest_first(run: dict, messages: list, fmt: str, keep_last: int, exempt: tuple = ()) -> None:
    before, after = _aligned(run, messages, fmt)
    changed = [b.size != a.size for b, a in zip(before, after)]
    candidates = [i for i, b in enumerate(before[:max(len(before) - keep_last, 0)]) if b.name not in exempt]
    for newer in candidates:
        for older in candidates:
            if older < newer and changed[newer] and not changed[older]:
                raise Fail(f"先清了较新的 {before[newer].call_id}，却留着更旧的 {before[older].call_id}：应从最旧的开始清")


def check_says_how(run: dict, messages: list, fmt: str) -> None:
    before, after = _aligned(run, messages, fmt)
    out = cleared_list(run, messages)
    texts = _contents(out, fmt)
    originals = _contents(messages, fmt)
    cleared = [(b, texts[i], originals[i]) for i, (b, a) in enumerate(zip(before, after)) if a.size != b.size]
    if not cleared:
        raise Fail("预算很紧时一个结果也没有清除")
    for b, text, original in cleared:
        if len(text) >= b.size:
            raise Fail(f"{b.call_id} 的占位文字（{len(text)} 字符）不比原结果（{b.size} 字符）短，清了等于没清")
        if b.name not in text:
            raise Fail(f"{b.call_id} 的占位文字没说原来是哪个工具的结果（{b.name}）：{text[:60]!r}")
        handle = json.loads(original).get("more", {}).get("result_id") if original.startswith("{") else None
        if handle is not None and f"read_more(result_id={handle}" not in text.replace(" ", ""):
            raise Fail(f"{b.call_id} 带着 more.result_id={handle}，占位文字应告诉模型用 read_more(result_id={handle}) "
                       f"取回：{text[:80]!r}")
        if handle is None and b.arguments not in text and json.dumps(json.loads(b.arguments), ensure_ascii=False) \
                not in text:
            raise Fail(f"{b.call_id} 没有 result_id，占位文字应写出原来的参数 {b.arguments}，模型才能再调用一次：{text[:80]!r}")


def _contents(messages: list, fmt: str) -> list[str]:
    if fmt == "openai_chat":
        return [str(m.get("content")) for m in messages if m.get("role") == "tool"]
    return [str(b.get("content")) for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def check_untouched(run: dict) -> None:
    if run["mutated"]:
        raise Fail("函数改动了传进来的消息列表：run.messages 是完整的记录，清除只应作用于这一次发给模型的副本")


class Rules:
    """The rules chapter 10 and exercise 10 both check, each over every case: the student's function run on a
    seeded history in `fmt`. A case is (seed, budget: a share of the results' size or that size less some
    characters, keep_last); `near` adds budgets a few clearings meet, for stops_at_budget; `within` is the seed
    of a short history within any budget. `exempt`, when given, is passed to the function and its tools' results
    are never to be cleared."""

    def __init__(self, fmt: str, cases: tuple, near: tuple, within: int, exempt: tuple | None = None) -> None:
        self.fmt, self.cases, self.near, self.within, self.exempt = fmt, cases, near, within, exempt
        self.kept = exempt or ()

    def run(self, play: Any, messages: list, budget: int, keep_last: int) -> dict:
        kwargs = {"keep_last": keep_last, **({} if self.exempt is None else {"exempt": self.exempt})}
        return play.run("clear_run", messages=messages, args=(budget,), kwargs=kwargs)

    def runs(self, play: Any, cases: tuple | None = None) -> Iterator[tuple[dict, list, int, int]]:
        """(run, messages, budget, keep_last) for each case."""
        for seed, share, keep_last in cases or self.cases:
            messages = history(self.fmt, seed)
            budget = budget_for(results_chars(messages, self.fmt), share)
            yield self.run(play, messages, budget, keep_last), messages, budget, keep_last

    def nothing_within_budget(self, play: Any) -> None:
        messages = history(self.fmt, self.within, turns=2)
        if self.run(play, messages, 1_000_000, 1)["out"] != messages:
            raise Fail("所有结果加起来没超预算时，应原样返回，不清除任何结果")

    def pairs_intact(self, play: Any) -> None:
        for run, messages, _, _ in self.runs(play):
            check_pairs(run, messages, self.fmt)

    def within_budget(self, play: Any) -> None:
        for run, messages, budget, keep_last in self.runs(play):
            check_budget(run, messages, self.fmt, budget, keep_last, self.kept)

    def stops_at_budget(self, play: Any) -> None:
        for run, messages, budget, keep_last in self.runs(play, self.cases + self.near):
            check_stops_at_budget(run, messages, self.fmt, budget, keep_last, self.kept)

    def keeps_last(self, play: Any) -> None:
        for run, messages, _, keep_last in self.runs(play):
            check_keeps_last(run, messages, self.fmt, keep_last)

    def oldest_first(self, play: Any) -> None:
        for run, messages, _, keep_last in self.runs(play):
            check_oldest_first(run, messages, self.fmt, keep_last, self.kept)

    def says_how_back(self, play: Any) -> None:
        for run, messages, _, _ in self.runs(play):
            check_says_how(run, messages, self.fmt)

    def input_untouched(self, play: Any) -> None:
        for run, _, _, _ in self.runs(play):
            check_untouched(run)
