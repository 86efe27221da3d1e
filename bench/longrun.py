"""Row 10: a 50-turn run's context, with and without clearing old tool results, and what clearing costs.

The task is chapter 10's (find April's paid orders page by page, send each customer a notice that needs
approval, answer with the count and the total), on the offline model through the real SDK over HTTP, with
approval given (`approve=True`). The executor's result budget is 600 characters instead of the chapter's
1,200, so `read_more` hands out 300-character pages and the same task takes 51 model turns instead of 34.
Three contenders, each a whole run: no clearing; chapter 10's `ClearPolicy(budget_chars=3000, keep_last=3,
exempt=("send_notice",))`; and its "clear everything" `ClearPolicy(budget_chars=0, keep_last=1)`.

Round r runs each contender once, in rotating order, on `SimulatedClock(seed=r)`. Per run: the model turns,
"context_chars" of each model step (what the model was sent: the JSON of the message list after clearing),
their total and their median; the final conversation (after clearing) split into its tool results and
the rest, which clearing never touches; whether the answer and the notices sent equal the uncleared run's; and the
wall-clock time of every `ClearPolicy.apply` call the loop made (a subclass that times the call and
changes nothing else), against the whole run's wall time.
"""
from __future__ import annotations

import statistics
import time
from typing import Any

from ._stats import line, per_round, rotation, row, summarize, target

KEY = "longrun"
TITLE = "长任务（50 轮以上）：清除旧工具结果前后发给模型的上下文，以及清除本身的耗时"
EN = "A 50-turn run's context with and without clearing old tool results, and what clearing costs"

QUESTION = "把 4 月所有已支付的订单找出来，给每位客户发一条付款确认通知，最后告诉我一共通知了几位客户、订单总金额是多少。"
RESULT_MAX_CHARS = 600  # chapter 10 uses 1,200; half of it makes read_more's pages 300 characters: 51 turns
MIN_TURNS = 50
POLICIES = {"chapter": dict(budget_chars=3000, keep_last=3, exempt=("send_notice",)),
            "everything": dict(budget_chars=0, keep_last=1)}
NAMES = {"none": ("不清除", "no clearing"),
         "chapter": ("第 10 章的策略（预算 3000，保留最近 3 个，send_notice 不清）",
                     "chapter 10's policy (budget 3,000, keep last 3, send_notice exempt)"),
         "everything": ("全部清除（预算 0，只保留最近 1 个）", "clear everything (budget 0, keep last 1)")}


def _timed_policy(calls: list[float], **settings: Any) -> Any:
    """A ClearPolicy whose apply() appends its own wall time to `calls`; what it returns is unchanged."""
    from toolkit.clearing import ClearPolicy

    class TimedClearPolicy(ClearPolicy):
        def apply(self, messages: list) -> Any:
            began = time.perf_counter()
            try:
                return super().apply(messages)
            finally:
                calls.append(time.perf_counter() - began)

    return TimedClearPolicy(**settings)


def one_run(name: str, seed: int, max_turns: int = 120) -> dict:
    """One whole run of the task under contender `name`: its sizes, outcome, wall time and clearing calls."""
    from toolkit import SimulatedClock, ToolExecutor, use_clock
    from toolkit.agent import run_agent
    from toolkit.clearing import ClearPolicy, context_chars
    from toolkit.tools.orders import Outbox, orders_registry
    from toolkit.viz.context import context_sizes

    calls: list[float] = []
    clear = _timed_policy(calls, **POLICIES[name]) if name in POLICIES else None
    executor = ToolExecutor(result_max_chars=RESULT_MAX_CHARS)
    outbox = Outbox()
    registry = orders_registry(executor, outbox)
    began = time.perf_counter()
    with use_clock(SimulatedClock(seed=seed)):
        run = run_agent(QUESTION, registry=registry, executor=executor, max_turns=max_turns, approve=True,
                        clear=clear)
    wall = time.perf_counter() - began
    sizes = context_sizes(run)
    final = ClearPolicy(**POLICIES[name]).apply(run.messages).messages if name in POLICIES else run.messages
    tool_chars = sum(context_chars([m]) for m in final if m.get("role") == "tool")
    return {"tool_results": sum(m.get("role") == "tool" for m in final), "final_tool_chars": tool_chars,
            "final_other_chars": context_chars(final) - tool_chars,
            "ok": run.ok, "stopped": run.stopped, "turns": run.turns, "sizes": sizes, "total": sum(sizes),
            "per_turn": statistics.median(sizes) if sizes else 0, "last": sizes[-1] if sizes else 0,
            "answer": run.answer, "sent": outbox.sent, "wall_s": wall, "clear_calls_s": calls}


def run(quick: bool = False) -> dict:
    """Measure row 10; returns the row dict (see _stats.row)."""
    rounds = 1 if quick else 5
    names = list(NAMES)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(rounds):
        for name in rotation(names, r):
            runs[name].append(one_run(name, seed=r))
    base = runs["none"]
    lines, targets, data = [], [], {"rounds": rounds, "seeds": list(range(rounds)),
                                    "result_max_chars": RESULT_MAX_CHARS, "policies": POLICIES, "contenders": {}}
    for name in names:
        mine = runs[name]
        zh, en = NAMES[name]
        turns = summarize([x["turns"] for x in mine])
        total = summarize([x["total"] for x in mine])
        per_turn = summarize([x["per_turn"] for x in mine])
        last = summarize([x["last"] for x in mine])
        wall = summarize([x["wall_s"] for x in mine])
        same = all(x["answer"] == b["answer"] and x["sent"] == b["sent"] for x, b in zip(mine, base))
        entry = {"turns": turns, "total_chars": total, "per_turn_chars": per_turn, "last_turn_chars": last,
                 "wall_s": wall, "ok": all(x["ok"] for x in mine), "same_outcome_as_none": same,
                 "sizes_seed0": mine[0]["sizes"], "final_tool_chars_seed0": mine[0]["final_tool_chars"],
                 "final_other_chars_seed0": mine[0]["final_other_chars"],
                 "sizes_vary_with_seed": any(x["sizes"] != mine[0]["sizes"] for x in mine)}
        lines += [line(f"{zh}：模型轮数", f"{en}: model turns", turns["median"], "轮"),
                  line(f"  每轮发给模型的字符数（中位数）", "  context characters per turn (median)",
                       per_turn["median"], "字符", per_turn["spread"]),
                  line(f"  最后一轮发给模型的字符数", "  context characters at the last turn", last["median"], "字符"),
                  line(f"  全程发给模型的字符数", "  context characters over the run", total["median"], "字符",
                       total["spread"]),
                  line(f"  结束时的对话：{mine[0]['tool_results']} 个工具结果 / 其余（系统提示、问题、模型的调用与笔记）",
                       f"  the final conversation: its {mine[0]['tool_results']} tool results / the rest (system "
                       "prompt, question, the model's calls and notes)",
                       f"{mine[0]['final_tool_chars']} / {mine[0]['final_other_chars']}", "字符"),
                  line(f"  整个运行的时间", "  the whole run, wall time", wall["median"], "s", wall["spread"])]
        if name != "none":
            ratio = summarize(per_round([x["total"] for x in mine], [b["total"] for b in base], lambda a, b: a / b))
            calls = [c for x in mine for c in x["clear_calls_s"]]
            per_call = summarize(calls)
            share = summarize([sum(x["clear_calls_s"]) / x["wall_s"] for x in mine])
            lines += [line("  全程字符数 / 不清除", "  context over the run / no clearing", ratio["median"], "×",
                           ratio["spread"]),
                      line("  答案与发出的通知和不清除时相同", "  answer and notices sent equal the uncleared run's",
                           "是" if same else "否"),
                      line("  清除一次的时间（中位数）", "  one clearing call (median)", per_call["median"] * 1e6, "µs",
                           per_call["spread"], best=per_call["min"] * 1e6),
                      line("  清除总时间 / 整个运行", "  all clearing calls / the whole run", share["median"], "×",
                           share["spread"])]
            entry.update({"total_ratio_to_none": ratio, "clear_call_s": per_call, "clear_share_of_run": share,
                          "clear_calls_per_run": summarize([len(x["clear_calls_s"]) for x in mine])})
            targets.append(target(f"{zh}：答案与通知不变", f"{en}: same answer and notices", 1.0 if same else 0.0,
                                  ">=", 1.0))
        data["contenders"][name] = entry
    targets.insert(0, target(f"每次运行至少 {MIN_TURNS} 轮模型调用", f"every run takes at least {MIN_TURNS} model turns",
                             min(x["turns"] for xs in runs.values() for x in xs), ">=", MIN_TURNS, "轮"))
    varies = [n for n in names if data["contenders"][n]["sizes_vary_with_seed"]]
    note = (f"{rounds} 轮（种子 0–{rounds - 1}），三者轮流先跑；结果预算 {RESULT_MAX_CHARS} 字符（第 10 章是 1200）让同一任务需要"
            f" 50 轮以上；字符数{'随种子变化：' + '、'.join(varies) if varies else '不随种子变化'}")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note, data=data)
