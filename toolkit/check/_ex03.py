"""Exercise 03: retry_with_budget — the chapter's retry, with a retry budget (a token bucket) shared by many calls:
a retry costs 5 tokens, a success refunds 1 up to the capacity, an empty bucket means no more retries."""
from __future__ import annotations

from typing import Any

from ._core import Check, Exercise, Fail, expect_pair, no_real_sleep, tool_awaited
from ._tools import budget_run

RETRY_COST = 5


class Runs:
    """What a row of calls of the student's function did, all sharing one budget dict."""

    def __init__(self, play: Any, plans: list[list[Any]], *, tokens: int = 100, capacity: int = 100,
                 waits: bool = False, **params: Any) -> None:
        seen = play.run("budget_run", plans=plans, budget={"tokens": tokens, "capacity": capacity}, **params)
        tool_awaited({"not_awaited": sum(r["not_awaited"] for r in seen["records"])})
        if waits:
            no_real_sleep(play)
        self.pairs = [expect_pair(v) for v in seen["values"]]
        self.result, self.error = self.pairs[-1]
        self.calls = [r["calls"] for r in seen["records"]]
        self.times = seen["records"][-1]["times"]
        self.waits, self.tokens = seen["waits"], seen["tokens"]


def check_success(play: Any) -> None:
    total = play.rng.randint(1_000, 99_999)  # drawn per run, as are the figures below: a replay does not match
    run = Runs(play, [["ok"]], result={"total_sales": total})
    if run.error is not None or run.result != {"total_sales": total}:
        raise Fail(f"一次成功时应返回 (结果, None)，得到 ({run.result!r}, {run.error!r})")
    if run.calls != [1]:
        raise Fail(f"成功后不应再调用，工具被调用了 {run.calls[0]} 次")


def check_transient(play: Any) -> None:
    answer = f"第三次成功（订单 {play.rng.randint(100, 999)}）"
    run = Runs(play, [["timeout", "connection", "ok"]], result=answer)
    if (run.result, run.error) != (answer, None):
        raise Fail(f"超时、连接错误之后第三次成功，应返回 ({answer!r}, None)，得到 ({run.result!r}, {run.error!r})")
    if run.calls != [3]:
        raise Fail(f"工具应被调用 3 次，实际 {run.calls[0]} 次")


def check_fatal(play: Any) -> None:
    tokens = play.rng.randint(60, 100)
    for step, label in (("permission", "PermissionError"), ("value", "ValueError（参数错误）")):
        run = Runs(play, [[step, "ok"]], tokens=tokens)
        if run.calls != [1]:
            raise Fail(f"{label} 重试也没用，应只调用 1 次，实际 {run.calls[0]} 次")
        if not run.error or run.result is not None:
            raise Fail(f"{label} 时应返回 (None, 错误说明)，得到 ({run.result!r}, {run.error!r})")
        if run.tokens != tokens:
            raise Fail(f"{label} 没有重试，不该花令牌：额度从 {tokens} 变成了 {run.tokens!r}")


def check_max_retries(play: Any) -> None:
    for max_retries in (3, 0):
        run = Runs(play, [["timeout"]], kwargs={"max_retries": max_retries})
        if run.calls != [max_retries + 1]:
            raise Fail(f"max_retries={max_retries} 表示第一次之后最多再试 {max_retries} 次（共 {max_retries + 1} 次），"
                       f"实际调用了 {run.calls[0]} 次")
        if not run.error or run.result is not None:
            raise Fail(f"一直超时应返回 (None, 错误说明)，得到 ({run.result!r}, {run.error!r})")
        if str(max_retries + 1) not in str(run.error):
            raise Fail(f"错误说明应写出一共尝试了几次（{max_retries + 1}），得到 {run.error!r}")


def check_costs(play: Any) -> None:
    tokens = play.rng.randint(40, 99)
    run = Runs(play, [["timeout", "connection", "ok"]], tokens=tokens, capacity=100)
    if run.calls != [3]:
        raise Fail(f"额度充足时应照常重试：工具应被调用 3 次，实际 {run.calls[0]} 次")
    expected = tokens - 2 * RETRY_COST + 1
    if run.tokens != expected:
        why = ("：一个令牌都没花，重试前要 budget[\"tokens\"] -= 5" if run.tokens == tokens else
               "：成功后没有还回 1 个" if run.tokens == expected - 1 else "")
        raise Fail(f"两次重试各花 {RETRY_COST} 个令牌，成功后还回 1 个：{tokens} − 10 + 1 = {expected}，"
                   f"实际剩 {run.tokens!r}{why}（budget[\"tokens\"] 要在传进来的那个字典里改）")


def check_empty(play: Any) -> None:
    left = play.rng.randint(1, RETRY_COST - 1)
    run = Runs(play, [["timeout"]], tokens=left)
    if run.calls != [1]:
        raise Fail(f"只剩 {left} 个令牌，不够一次重试（{RETRY_COST} 个）：应只调用 1 次，实际 {run.calls[0]} 次")
    if not run.error or run.result is not None or "额度" not in str(run.error):
        raise Fail(f"额度不够时应返回 (None, 错误说明)，说明里写出「额度」用完了，得到 ({run.result!r}, {run.error!r})")
    if run.tokens != left:
        raise Fail(f"没有重试就不该扣令牌：应还剩 {left} 个，实际 {run.tokens!r}")
    run = Runs(play, [["timeout"]], tokens=2 * RETRY_COST)
    if run.calls != [3] or run.tokens != 0:
        raise Fail(f"剩 {2 * RETRY_COST} 个令牌刚好够两次重试（共 3 次调用、剩 0 个），"
                   f"实际调用 {run.calls[0]} 次、剩 {run.tokens!r} 个")


def check_shared(play: Any) -> None:
    calls, tokens = play.rng.randint(60, 100), RETRY_COST * play.rng.randint(12, 20)
    run = Runs(play, [["timeout"]] * calls, tokens=tokens, capacity=tokens)
    total, expected = sum(run.calls), calls + tokens // RETRY_COST
    if total != expected:
        gap = f"多了 {total - expected} 次" if total > expected else f"少了 {expected - total} 次"
        raise Fail(f"{calls} 次调用一个一直超时的工具，共享 {tokens} 个令牌（每次重试 {RETRY_COST} 个）：应一共请求 "
                   f"{expected} 次（{calls} 次第一次调用 + {tokens // RETRY_COST} 次重试），实际 {total} 次，{gap}"
                   + ("；额度要跨调用共享，不要每次调用复制一份" if total > expected else ""))


def check_refund_capped(play: Any) -> None:
    tokens = play.rng.randint(30, 90)
    run = Runs(play, [["ok"]] * 3, tokens=tokens, capacity=100)
    if run.tokens != tokens + 3:
        raise Fail(f"每次成功还回 1 个令牌：{tokens} 个令牌、3 次成功后应有 {tokens + 3} 个，实际 {run.tokens!r}")
    capacity = play.rng.randint(60, 100)
    run = Runs(play, [["ok"]], tokens=capacity, capacity=capacity)
    if run.tokens != capacity:
        raise Fail(f"令牌不能超过 capacity：满额 {capacity} 个时成功一次应还是 {capacity} 个，实际 {run.tokens!r}"
                   + ("，超过了 capacity" if isinstance(run.tokens, int) and run.tokens > capacity else ""))


def check_retry_after(play: Any) -> None:
    after = float(play.rng.randint(4, 9))
    answer = f"限流后成功（第 {play.rng.randint(2, 99)} 批）"
    run = Runs(play, [["rate_limited", "rate_limited", "ok"]], waits=True, retry_after=after, result=answer)
    if (run.result, run.error) != (answer, None):
        raise Fail(f"限流两次后成功，应返回 ({answer!r}, None)，得到 ({run.result!r}, {run.error!r})")
    waits = [round(t2 - t1, 3) for t1, t2 in zip(run.times, run.times[1:])]
    if len(waits) != 2 or min(waits) < after:
        raise Fail(f"服务器说 Retry-After {after:g} 秒，两次等待应都 ≥ {after:g} 秒，实际间隔 {waits}")


def check_jitter(play: Any) -> None:
    seeds = play.rng.sample(range(10_000), 3)
    schedules = []
    for seed in seeds + seeds[:1]:  # the first seed once more: the clock's random gives the same waits again
        run = Runs(play, [["timeout", "timeout", "timeout", "ok"]], waits=True, seed=seed)
        if not run.waits:
            raise Fail("重试之间没有在模拟时钟上等待：请 await get_clock().sleep(秒数)")
        schedules.append(tuple(round(s, 6) for s in run.waits))
    if schedules[3] != schedules[0]:
        raise Fail(f"同一个随机种子跑两次，等待时间却不一样：{list(schedules[0])} 和 {list(schedules[3])}。抖动要用模拟时钟的"
                   "随机数 get_clock().random（种子一样，抖动就一样，演示才能重现），不要用 random 模块的 random.uniform")
    if len(set(schedules[:3])) == 1:
        raise Fail(f"三个不同随机种子下的等待时间完全一样 {list(schedules[0])}：没有抖动，很多客户端会同时重试（惊群）")
    for waits in schedules:
        if any(w > 30.0 + 1e-9 for w in waits):
            raise Fail(f"等待超过了 30 秒的上限：{list(waits)}")


EXERCISE = Exercise("03", "03_retry", "重试额度：多次调用共享一桶令牌，挂掉的依赖拖不垮整次运行", "retry_with_budget", (
    Check("success_returns_pair", "一次成功：返回 (结果, None)，只调用一次", "成功就 return result, None", check_success),
    Check("transient_errors_retried", "超时、连接错误会重试，第三次成功", "用 classify_error(exc).retryable 判断",
          check_transient),
    Check("fatal_errors_cost_nothing", "PermissionError、参数错误只试一次，也不花令牌",
          "classify_error(exc).retryable 为 False 时立即返回 (None, 错误说明)，先判断再扣令牌", check_fatal),
    Check("max_retries_counts_retries", "max_retries 是「第一次之后」的重试次数，错误里写出总次数",
          "最多调用 max_retries + 1 次；错误说明里写「共尝试 N 次」", check_max_retries),
    Check("retry_costs_tokens", "每次重试花 5 个令牌，成功后还回 1 个",
          "重试前 budget[\"tokens\"] -= 5；成功时 budget[\"tokens\"] += 1", check_costs),
    Check("empty_budget_stops_retrying", "令牌不够一次重试时不再重试，错误说明里写「额度」用完",
          "重试前判断 budget[\"tokens\"] < 5，成立就返回 (None, \"……重试额度已用完……\")", check_empty),
    Check("budget_shared_across_calls", "几十次调用共享一桶令牌：总请求数 = 调用数 + 令牌数 ÷ 5，不是每次调用都重试 3 次",
          "直接改传进来的 budget 字典，不要复制它，也不要用全局变量", check_shared),
    Check("refund_capped", "成功还回的令牌不超过 capacity",
          "budget[\"tokens\"] = min(budget[\"capacity\"], budget[\"tokens\"] + 1)", check_refund_capped),
    Check("retry_after_honoured", "服务器的 Retry-After 被遵守（等待不短于它要求的秒数）",
          "等待 = max(退避时间, classify_error(exc).retry_after or 0)", check_retry_after),
    Check("jitter", "等待走模拟时钟、用它的随机数抖动（同一个种子等待相同），且不超过 30 秒上限",
          "await get_clock().sleep(get_clock().random.uniform(0, min(30, 2 ** n)))", check_jitter),
), probes=(budget_run,))
