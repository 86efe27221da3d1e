"""Chapter 10's own checks: the student's clear_old_results(messages, budget_chars, keep_last=3), Chat Completions.

The chapter writes three versions and runs some of these checks after each (`check(clear_old_results, "ch10",
only=[...])`): deleting old tool messages breaks the pairing the API checks (pairs_intact); blanking them keeps
the pairs but clears every result but the last keep_last whatever the budget, on the list it was given, and leaves
the model no way back (stops_at_budget, nothing_within_budget, input_untouched, says_how_back); the third clears
oldest first, stops once within the budget, on a copy.
"""
from __future__ import annotations

from typing import Any

from ._clearing import (check_budget, check_keeps_last, check_oldest_first, check_pairs, check_says_how,
                        budget_for, check_stops_at_budget, check_untouched, clear_run, history,
                        results_chars)
from ._core import Check, Exercise, Fail

FMT = "openai_chat"
CASES = ((1, 0.7, 2), (2, 0.3, 3), (3, 0.0, 1))  # (seed, budget as a share of the results' size, keep_last)
NEAR = ((5, 0.9, 1), (6, 0.8, 2), (7, 1, 1))  # budgets a few clearings meet (1: one character over the budget)


def _runs(play: Any, cases: tuple = CASES):
    for seed, share, keep_last in cases:
        messages = history(FMT, seed)
        budget = budget_for(results_chars(messages, FMT), share)
        yield play.run("clear_run", messages=messages, args=(budget,), kwargs={"keep_last": keep_last}), \
            messages, budget, keep_last


def check_pairs_intact(play: Any) -> None:
    for run, messages, _, _ in _runs(play):
        check_pairs(run, messages, FMT)


def check_within_budget(play: Any) -> None:
    for run, messages, budget, keep_last in _runs(play):
        check_budget(run, messages, FMT, budget, keep_last)


def check_stops_once_within(play: Any) -> None:
    for run, messages, budget, keep_last in _runs(play, CASES + NEAR):
        check_stops_at_budget(run, messages, FMT, budget, keep_last)


def check_keeps_last_results(play: Any) -> None:
    for run, messages, _, keep_last in _runs(play):
        check_keeps_last(run, messages, FMT, keep_last)


def check_clears_oldest_first(play: Any) -> None:
    for run, messages, _, keep_last in _runs(play):
        check_oldest_first(run, messages, FMT, keep_last)


def check_says_how_back(play: Any) -> None:
    for run, messages, _, _ in _runs(play):
        check_says_how(run, messages, FMT)


def check_input_untouched(play: Any) -> None:
    for run, _, _, _ in _runs(play):
        check_untouched(run)


def check_nothing_within_budget(play: Any) -> None:
    messages = history(FMT, 4, turns=2)
    run = play.run("clear_run", messages=messages, args=(1_000_000,), kwargs={"keep_last": 1})
    if run["out"] != messages:
        raise Fail("所有结果加起来没超预算时，应原样返回，不清除任何结果")


EXERCISE = Exercise("ch10", "10_long_runs", "清除旧的工具结果：配对不断、预算之内、留下最新、说明怎么取回", "clear_old_results", (
    Check("pairs_intact", "每个 tool_call 仍有它的结果，id 和顺序不变", "别删消息：只把旧结果的 content 换成占位文字",
          check_pairs_intact),
    Check("within_budget", "清除后所有工具结果加起来不超过 budget_chars（做得到时）",
          "从最旧的开始，一个一个换成占位文字，直到总字符数不超过预算", check_within_budget),
    Check("stops_at_budget", "清到不超过预算就停，不多清", "每清一个就更新总数，一到预算之内就停（break）",
          check_stops_once_within),
    Check("keeps_last", "最后 keep_last 个结果原样保留", "先算出哪些结果受保护：results[-keep_last:]", check_keeps_last_results),
    Check("oldest_first", "从最旧的结果开始清", "按结果在对话里出现的顺序清", check_clears_oldest_first),
    Check("says_how_back", "占位文字说明原来是什么、怎么取回（read_more 或同样的参数再调一次）",
          "结果里有 more.result_id 就写 read_more(result_id=…)；没有就写出工具名和原来的参数", check_says_how_back),
    Check("input_untouched", "不改动传进来的列表", "先 copy.deepcopy(messages)，再改副本", check_input_untouched),
    Check("nothing_within_budget", "没超预算时原样返回", "先算总字符数，不超预算就直接返回", check_nothing_within_budget),
), probes=(clear_run,))
