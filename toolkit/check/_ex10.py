"""Exercise 10: clear_anthropic(messages, budget_chars, keep_last=3, exempt=()) — chapter 10's clearing, one step
further: Anthropic Messages, where one user message carries several tool_result blocks, and tools whose results
are never cleared (a write's receipt)."""
from __future__ import annotations

from typing import Any

from ._clearing import Rules, _aligned, check_budget, check_keeps_last, check_pairs, check_stops_at_budget, \
    check_untouched, clear_run, results_chars
from ._core import Check, Exercise, Fail

FMT = "anthropic"
EXEMPT = ("send_notice",)
# (seed, budget, keep_last); the budget a share of the results' size (a float) or that size less some characters
# (an int): one clearing is then enough, and in seed 24 the first user message holds two results
CASES = ((11, 0.7, 2), (12, 0.3, 3), (13, 0.0, 1))
NEAR = ((14, 0.9, 1), (15, 0.8, 2), (16, 1.0, 1), (24, 1, 2))


class _Rules(Rules):
    def runs(self, play: Any, cases: tuple | None = None):
        """Chapter 10's runs, and no point for a function that returns a history over budget as it came."""
        for run, messages, budget, keep_last in super().runs(play, cases):
            if run["out"] == messages and results_chars(messages, FMT) > budget:  # a copy passes the other rules
                raise Fail(f"budget_chars={budget}：结果加起来有 {results_chars(messages, FMT)} 字符，超出预算，"
                           "返回的却和传进来的一模一样：一个结果也没有清除")
            yield run, messages, budget, keep_last

    def nothing_within_budget(self, play: Any) -> None:
        next(self.runs(play))  # a point for leaving a history alone only when the answer clears one over budget
        super().nothing_within_budget(play)


RULES = _Rules(FMT, CASES, NEAR, within=17, exempt=EXEMPT)


def check_exempt_kept(play: Any) -> None:
    for run, messages, _, _ in RULES.runs(play):
        before, after = _aligned(run, messages, FMT)
        for b, a in zip(before, after):
            if b.name in EXEMPT and a.size != b.size:
                raise Fail(f"{b.call_id} 是 {b.name} 的结果（在 exempt 里），应永远保留：写操作的回执清掉了，"
                           "模型就说不清发没发出去")


def check_random_histories(play: Any) -> None:
    cases = tuple((100 + i, (i * 0.17) % 1, i % 4) for i in range(20))
    for (seed, _, keep_last), (run, messages, budget, _) in zip(cases, RULES.runs(play, cases)):
        try:
            check_pairs(run, messages, FMT)
            check_budget(run, messages, FMT, budget, keep_last, EXEMPT)
            check_stops_at_budget(run, messages, FMT, budget, keep_last, EXEMPT)
            check_keeps_last(run, messages, FMT, keep_last)
            check_untouched(run)
        except Fail as exc:
            raise Fail(f"随机对话 seed={seed}、budget_chars={budget}、keep_last={keep_last}：{exc}") from None


EXERCISE = Exercise("10", "10_long_runs", "Anthropic 格式的清除：一条消息里多个结果、豁免的工具", "clear_anthropic", (
    Check("pairs_intact", "每个 tool_use 仍有它的 tool_result，id、顺序、消息条数不变",
          "只替换 tool_result 块的 content；同一条 user 消息里的其他块不动", RULES.pairs_intact),
    Check("within_budget", "清除后所有 tool_result 加起来不超过 budget_chars（做得到时）",
          "按块出现的顺序从最旧的清，直到总字符数不超过预算", RULES.within_budget),
    Check("stops_at_budget", "清到不超过预算就停，不多清", "每清一个就重新算总数，一到预算之内就 break",
          RULES.stops_at_budget),
    Check("nothing_within_budget", "没超预算时原样返回", "先算总字符数，不超预算就直接返回（清除前先比较）",
          RULES.nothing_within_budget),
    Check("keeps_last", "最后 keep_last 个结果原样保留（按块数，不按消息条数）",
          "先把所有 tool_result 块按顺序列出来，再取最后 keep_last 个", RULES.keeps_last),
    Check("exempt_kept", "exempt 里的工具（如 send_notice）的结果永远保留",
          "tool_result 块里没有工具名：用 tool_use_id 到前面 assistant 的 tool_use 块里查 name", check_exempt_kept),
    Check("oldest_first", "从最旧的结果开始清（跳过受保护的）", "受保护的跳过，不要因此停下", RULES.oldest_first),
    Check("says_how_back", "占位文字说明原来是什么、怎么取回", "和第 10 章一样：read_more(result_id=…) 或工具名加原来的参数",
          RULES.says_how_back),
    Check("input_untouched", "不改动传进来的列表", "copy.deepcopy(messages) 之后再改", RULES.input_untouched),
    Check("random_histories", "20 段随机对话都满足配对、预算、清到预算就停、保留最新、不改输入",
          "预算为 0、keep_last 为 0 时也要成立", check_random_histories),
), probes=(clear_run,))
