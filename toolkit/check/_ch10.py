"""Chapter 10's own checks: the student's clear_old_results(messages, budget_chars, keep_last=3), Chat Completions.

The chapter writes three versions and runs some of these checks after each (`check(clear_old_results, "ch10",
only=[...])`): deleting old tool messages breaks the pairing the API checks (pairs_intact); blanking them keeps
the pairs but clears every result but the last keep_last whatever the budget, on the list it was given, and leaves
the model no way back (stops_at_budget, nothing_within_budget, input_untouched, says_how_back); the third clears
oldest first, stops once within the budget, on a copy.
"""
from __future__ import annotations

from ._clearing import Rules, clear_run
from ._core import Check, Exercise

FMT = "openai_chat"
CASES = ((1, 0.7, 2), (2, 0.3, 3), (3, 0.0, 1))  # (seed, budget as a share of the results' size, keep_last)
NEAR = ((5, 0.9, 1), (6, 0.8, 2), (7, 1, 1))  # budgets a few clearings meet (1: one character over the budget)
RULES = Rules(FMT, CASES, NEAR, within=4)


EXERCISE = Exercise("ch10", "10_long_runs", "清除旧的工具结果：配对不断、预算之内、留下最新、说明怎么取回", "clear_old_results", (
    Check("pairs_intact", "每个 tool_call 仍有它的结果，id 和顺序不变", "别删消息：只把旧结果的 content 换成占位文字",
          RULES.pairs_intact),
    Check("within_budget", "清除后所有工具结果加起来不超过 budget_chars（做得到时）",
          "从最旧的开始，一个一个换成占位文字，直到总字符数不超过预算", RULES.within_budget),
    Check("stops_at_budget", "清到不超过预算就停，不多清", "每清一个就更新总数，一到预算之内就停（break）",
          RULES.stops_at_budget),
    Check("keeps_last", "最后 keep_last 个结果原样保留", "先算出哪些结果受保护：results[-keep_last:]", RULES.keeps_last),
    Check("oldest_first", "从最旧的结果开始清", "按结果在对话里出现的顺序清", RULES.oldest_first),
    Check("says_how_back", "占位文字说明原来是什么、怎么取回（read_more 或同样的参数再调一次）",
          "结果里有 more.result_id 就写 read_more(result_id=…)；没有就写出工具名和原来的参数", RULES.says_how_back),
    Check("input_untouched", "不改动传进来的列表", "先 copy.deepcopy(messages)，再改副本", RULES.input_untouched),
    Check("nothing_within_budget", "没超预算时原样返回", "先算总字符数，不超预算就直接返回", RULES.nothing_within_budget),
), probes=(clear_run,))
