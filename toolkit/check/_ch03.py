"""Chapter 03's checks for call_tool_with_retry, step by step: only transient errors, max_retries counted as
retries, waits on the simulated clock with jitter and a cap, Retry-After, a deadline. Exercise 03 reuses them."""
from __future__ import annotations

from typing import Any

from ._core import Check, Exercise, Fail, expect_pair, no_real_sleep, tool_awaited
from ._tools import retry_run


class Run:
    """What one call of the student's retry function did: its (result, error) and the tool's record."""

    def __init__(self, play: Any, plan: list[Any], *, waits: bool = False, **params: Any) -> None:
        seen = play.run("retry_run", plan=plan, **params)
        tool_awaited(seen)
        if waits:
            no_real_sleep(play)
        self.result, self.error = expect_pair(seen["value"])
        self.calls, self.times, self.args = seen["calls"], seen["times"], seen["args"]
        self.waits, self.now = seen["waits"], seen["now"]


def check_success(play: Any) -> None:
    run = Run(play, ["ok"], result={"total_sales": 9692})
    if run.error is not None or run.result != {"total_sales": 9692}:
        raise Fail(f"一次成功时应返回 (结果, None)，得到 ({run.result!r}, {run.error!r})")
    if run.calls != 1:
        raise Fail(f"成功后不应再调用，工具被调用了 {run.calls} 次")


def check_transient(play: Any) -> None:
    run = Run(play, ["timeout", "connection", "ok"], result="第三次成功")
    if (run.result, run.error) != ("第三次成功", None):
        raise Fail(f"超时、连接错误之后第三次成功，应返回 ('第三次成功', None)，得到 ({run.result!r}, {run.error!r})")
    if run.calls != 3:
        raise Fail(f"工具应被调用 3 次，实际 {run.calls} 次")


def check_permission(play: Any) -> None:
    for step, label in (("permission", "PermissionError"), ("value", "ValueError（参数错误）")):
        run = Run(play, [step, "ok"])
        if run.calls != 1:
            raise Fail(f"{label} 重试也没用，应只调用 1 次，实际 {run.calls} 次")
        if not run.error or run.result is not None:
            raise Fail(f"{label} 时应返回 (None, 错误说明)，得到 ({run.result!r}, {run.error!r})")


def check_max_retries(play: Any) -> None:
    for max_retries in (3, 1):
        run = Run(play, ["timeout"], kwargs={"max_retries": max_retries})
        if run.calls != max_retries + 1:
            raise Fail(f"max_retries={max_retries} 表示第一次之后最多再试 {max_retries} 次（共 {max_retries + 1} 次），"
                       f"实际调用了 {run.calls} 次")
        if not run.error or run.result is not None:
            raise Fail(f"一直超时应返回 (None, 错误说明)，得到 ({run.result!r}, {run.error!r})")
        if str(max_retries + 1) not in str(run.error):
            raise Fail(f"错误说明应写出一共尝试了几次（{max_retries + 1}），得到 {run.error!r}")


def check_zero(play: Any) -> None:
    run = Run(play, ["timeout"], kwargs={"max_retries": 0})
    if run.calls != 1 or not run.error:
        raise Fail(f"max_retries=0 应只试 1 次并返回错误，实际调用 {run.calls} 次，error={run.error!r}")


def check_retry_after(play: Any) -> None:
    run = Run(play, ["rate_limited", "rate_limited", "ok"], waits=True, retry_after=5.0, result="限流后成功")
    if (run.result, run.error) != ("限流后成功", None):
        raise Fail(f"限流两次后成功，应返回 ('限流后成功', None)，得到 ({run.result!r}, {run.error!r})")
    waits = [round(t2 - t1, 3) for t1, t2 in zip(run.times, run.times[1:])]
    if len(waits) != 2 or min(waits) < 5.0:
        raise Fail(f"服务器说 Retry-After 5 秒，两次等待应都 ≥ 5 秒，实际间隔 {waits}")


def check_deadline(play: Any) -> None:
    for plan, latency, deadline, extra in ((["timeout"], 2.0, 10.0, {}),
                                           (["rate_limited"], 1.0, 6.0, {"retry_after": 4.0})):
        run = Run(play, plan, waits=True, latency=latency, kwargs={"max_retries": 10, "deadline": deadline}, **extra)
        if not run.error:
            raise Fail("一直失败应返回错误")
        starts = [round(t, 2) for t in run.times]
        if any(t > deadline + 1e-9 for t in run.times):
            raise Fail(f"deadline={deadline:g} 秒：不应在第 {deadline:g} 秒之后再开始尝试（开始时刻 {starts}）")
        if run.times and run.now > run.times[-1] + latency + 1e-9:
            raise Fail(f"deadline={deadline:g} 秒：最后一次尝试在第 {run.times[-1] + latency:g} 秒结束，之后又等到第 "
                       f"{run.now:g} 秒才返回：等待之前就要判断「等完会不会超过总时限」，会超过就不再等")
        if run.calls < 2:
            raise Fail(f"{deadline:g} 秒内至少来得及重试一次，实际只调用了 {run.calls} 次（开始时刻 {starts}）")


def check_clock(play: Any) -> None:
    run = Run(play, ["timeout", "timeout", "ok"], waits=True)
    if not run.waits or sum(run.waits) <= 0:
        raise Fail("重试之间没有在模拟时钟上等待：请 await get_clock().sleep(秒数)")


def check_jitter(play: Any) -> None:
    schedules = []
    for seed in (0, 1, 2):
        run = Run(play, ["timeout", "timeout", "timeout", "ok"], waits=True, seed=seed)
        if not run.waits:
            raise Fail("重试之间没有在模拟时钟上等待，也就谈不上抖动：请 await get_clock().sleep(秒数)")
        schedules.append(tuple(round(s, 6) for s in run.waits))
    if len(set(schedules)) == 1:
        raise Fail(f"三个不同随机种子下的等待时间完全一样 {list(schedules[0])}：没有抖动，"
                   "很多客户端会同时重试（惊群）")
    for waits in schedules:
        if any(w > 30.0 + 1e-9 for w in waits):
            raise Fail(f"等待超过了 30 秒的上限：{list(waits)}")


def check_sync(play: Any) -> None:
    run = Run(play, ["timeout", "ok"], sync=True, result="同步工具的结果")
    if (run.result, run.error) != ("同步工具的结果", None) or run.calls != 2:
        raise Fail(f"同步（普通 def）工具也要支持：得到 ({run.result!r}, {run.error!r})，调用 {run.calls} 次")


def check_arguments(play: Any) -> None:
    run = Run(play, ["ok"], args=("上海",), kwargs={"unit": "celsius"})
    if run.args != [[["上海"], {"unit": "celsius"}]]:
        raise Fail(f"参数应原样传给工具：期望 ('上海',) 和 {{'unit': 'celsius'}}，实际 {run.args}")


CHECKS = (
    Check("success_returns_pair", "一次成功：返回 (结果, None)，只调用一次", "成功就 return result, None", check_success),
    Check("transient_errors_retried", "超时、连接错误会重试，第三次成功", "用 toolkit.classify_error(exc).retryable 判断",
          check_transient),
    Check("permission_error_not_retried", "PermissionError、参数错误只试一次（原课程执行器会重试它们）",
          "classify_error(exc).retryable 为 False 时立即返回 (None, 错误说明)", check_permission),
    Check("max_retries_counts_retries", "max_retries 是「第一次之后」的重试次数，错误里写出总次数",
          "循环 max_retries + 1 次；错误说明里写「共尝试 N 次」", check_max_retries),
    Check("max_retries_zero", "max_retries=0 也返回 (None, 错误)（原课程返回 None）", "不要让循环一次都不返回", check_zero),
    Check("retry_after_honoured", "服务器的 Retry-After 被遵守（等待 ≥ 5 秒）",
          "classify_error(exc).retry_after 有值时，等待 = max(退避时间, retry_after)", check_retry_after),
    Check("deadline_respected", "整个调用不超过 deadline（含等待和每次调用的耗时）",
          "开始时记下 get_clock().now()；下一次等待后会超时就停下", check_deadline),
    Check("waits_on_clock", "等待走模拟时钟，不真的 sleep", "await get_clock().sleep(wait)", check_clock),
    Check("jitter", "等待有随机抖动，且不超过 30 秒上限", "wait = get_clock().random.uniform(0, min(30, 2 ** n))",
          check_jitter),
    Check("sync_tool_works", "普通 def 写的同步工具也能重试", "调用后用 inspect.isawaitable 判断要不要 await",
          check_sync),
    Check("arguments_passed", "*args、**kwargs 原样传给工具", "tool_fn(*args, **kwargs)", check_arguments),
)

EXERCISE = Exercise("ch03", "03_retry", "课堂版 call_tool_with_retry", "call_tool_with_retry", CHECKS,
                    probes=(retry_run,))
