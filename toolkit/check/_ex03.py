"""Exercise 03: retry_with_deadline — only transient errors, Retry-After, a deadline, waits on the simulated clock."""
from __future__ import annotations

import time
from typing import Any, Callable

from ..results import RetryableToolError
from ._core import Check, Exercise, Fail, call_maybe_async, simulate
from ._tools import Scripted, ScriptedSync, pair


def _run(fn: Callable, tool: Any, seed: int = 0, **kwargs: Any) -> tuple[Any, Any, Any]:
    async def go(clock: Any) -> Any:
        return pair(await call_maybe_async(fn, tool, **kwargs))
    (result, error), clock = simulate(go, seed)
    return result, error, clock


def check_success(fn: Callable) -> None:
    tool = Scripted(["ok"], result={"total_sales": 9692})
    result, error, _ = _run(fn, tool)
    if error is not None or result != {"total_sales": 9692}:
        raise Fail(f"一次成功时应返回 (结果, None)，得到 ({result!r}, {error!r})")
    if tool.calls != 1:
        raise Fail(f"成功后不应再调用，工具被调用了 {tool.calls} 次")


def check_transient(fn: Callable) -> None:
    tool = Scripted(["timeout", "connection", "ok"], result="第三次成功")
    result, error, _ = _run(fn, tool)
    if (result, error) != ("第三次成功", None):
        raise Fail(f"超时、连接错误之后第三次成功，应返回 ('第三次成功', None)，得到 ({result!r}, {error!r})")
    if tool.calls != 3:
        raise Fail(f"工具应被调用 3 次，实际 {tool.calls} 次")


def check_permission(fn: Callable) -> None:
    for step, label in (("permission", "PermissionError"), ("value", "ValueError（参数错误）")):
        tool = Scripted([step, "ok"])
        result, error, _ = _run(fn, tool)
        if tool.calls != 1:
            raise Fail(f"{label} 重试也没用，应只调用 1 次，实际 {tool.calls} 次")
        if not error or result is not None:
            raise Fail(f"{label} 时应返回 (None, 错误说明)，得到 ({result!r}, {error!r})")


def check_max_retries(fn: Callable) -> None:
    for max_retries in (3, 1):
        tool = Scripted(["timeout"])
        result, error, _ = _run(fn, tool, max_retries=max_retries)
        if tool.calls != max_retries + 1:
            raise Fail(f"max_retries={max_retries} 表示第一次之后最多再试 {max_retries} 次（共 {max_retries + 1} 次），"
                       f"实际调用了 {tool.calls} 次")
        if not error or result is not None:
            raise Fail(f"一直超时应返回 (None, 错误说明)，得到 ({result!r}, {error!r})")
        if str(max_retries + 1) not in str(error):
            raise Fail(f"错误说明应写出一共尝试了几次（{max_retries + 1}），得到 {error!r}")


def check_zero(fn: Callable) -> None:
    tool = Scripted(["timeout"])
    result, error, _ = _run(fn, tool, max_retries=0)
    if tool.calls != 1 or not error:
        raise Fail(f"max_retries=0 应只试 1 次并返回错误，实际调用 {tool.calls} 次，error={error!r}")


def check_retry_after(fn: Callable) -> None:
    tool = Scripted(["rate_limited", "rate_limited", "ok"], retry_after=5.0, result="限流后成功")
    result, error, clock = _run(fn, tool)
    if (result, error) != ("限流后成功", None):
        raise Fail(f"限流两次后成功，应返回 ('限流后成功', None)，得到 ({result!r}, {error!r})")
    waits = [round(t2 - t1, 3) for t1, t2 in zip(tool.times, tool.times[1:])]
    if len(waits) != 2 or min(waits) < 5.0:
        raise Fail(f"服务器说 Retry-After 5 秒，两次等待应都 ≥ 5 秒，实际间隔 {waits}")


def check_deadline(fn: Callable) -> None:
    tool = Scripted(["timeout"], latency=2.0)
    result, error, clock = _run(fn, tool, max_retries=10, deadline=10.0)
    if not error:
        raise Fail("一直超时应返回错误")
    late = [round(t, 2) for t in tool.times if t > 10.0 + 1e-9]
    if late or clock.now() > 12.0 + 1e-9:
        raise Fail(f"deadline=10 秒：不应在第 10 秒之后再开始尝试（开始时刻 {[round(t, 2) for t in tool.times]}），"
                   f"整个调用用了 {clock.now():.2f} 秒（模拟时钟）")
    if tool.calls < 2:
        raise Fail(f"10 秒内至少来得及重试一次，实际只调用了 {tool.calls} 次")


def check_clock(fn: Callable) -> None:
    tool = Scripted(["timeout", "timeout", "ok"])
    began = time.perf_counter()
    _, _, clock = _run(fn, tool)
    real = time.perf_counter() - began
    if not clock.sleeps or sum(clock.sleeps) <= 0:
        raise Fail("重试之间没有在模拟时钟上等待：请 await get_clock().sleep(秒数)")
    if real > 2.0:
        raise Fail(f"这次检查用了 {real:.1f} 秒真实时间：等待应该交给 get_clock().sleep")


def check_jitter(fn: Callable) -> None:
    schedules = []
    for seed in (0, 1, 2):
        tool = Scripted(["timeout", "timeout", "timeout", "ok"])
        _, _, clock = _run(fn, tool, seed=seed)
        schedules.append(tuple(round(s, 6) for s in clock.sleeps))
    if len(set(schedules)) == 1:
        raise Fail(f"三个不同随机种子下的等待时间完全一样 {list(schedules[0])}：没有抖动，"
                   "很多客户端会同时重试（惊群）")
    for waits in schedules:
        if any(w > 30.0 + 1e-9 for w in waits):
            raise Fail(f"等待超过了 30 秒的上限：{list(waits)}")


def check_sync(fn: Callable) -> None:
    tool = ScriptedSync(["timeout", "ok"], result="同步工具的结果")
    result, error, _ = _run(fn, tool)
    if (result, error) != ("同步工具的结果", None) or tool.calls != 2:
        raise Fail(f"同步（普通 def）工具也要支持：得到 ({result!r}, {error!r})，调用 {tool.calls} 次")


def check_arguments(fn: Callable) -> None:
    tool = Scripted(["ok"])

    async def go(clock: Any) -> Any:
        return pair(await call_maybe_async(fn, tool, "上海", unit="celsius"))
    simulate(go)
    if tool.args != [(("上海",), {"unit": "celsius"})]:
        raise Fail(f"参数应原样传给工具：期望 (('上海',), {{'unit': 'celsius'}})，实际 {tool.args}")


EXERCISE = Exercise("03", "03_retry", "重试：只重试暂时性错误，遵守 Retry-After 和总时限", "retry_with_deadline", (
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
))
