"""Exercise 08: RepeatGuard — pitfall 7, the same tool called again and again with the same arguments."""
from __future__ import annotations

from typing import Any

from ._core import Check, Exercise, Fail, expect_pair, play, probe, simulate, tool_awaited
from ._tools import Scripted


@probe
def guard_run(cls: Any, *, calls: list, plans: dict | None = None, fresh: bool = False, result: Any = "结果") -> dict:
    """Probe: make RepeatGuard() (a new one per call with `fresh`) and make the calls [tool name, args, kwargs].

    Tools with the same name are one scripted tool (plans: name -> plan, default ["ok"]; each returns
    `result` when it succeeds). Returns what each call returned, each tool's record and the (last)
    guard's `refused`.
    """
    tools: dict[str, Scripted] = {}
    for name, _, _ in calls:
        tools.setdefault(name, Scripted((plans or {}).get(name, ["ok"]), name=name, result=result))

    async def go(clock: Any) -> dict:
        guard = await play(cls)
        if not callable(guard):
            return {"not_callable": True}
        outs = []
        for name, args, kwargs in calls:
            if fresh and outs:
                guard = await play(cls)
            outs.append(await play(guard, tools[name], *args, **kwargs))
        return {"outs": outs, "refused": await play(getattr, guard, "refused", "<没有 refused 属性>")}

    record, _ = simulate(go)
    return {**record, "tools": {name: tool.record() for name, tool in tools.items()}}


class Guarded:
    """What a RepeatGuard did with a series of calls (referee side)."""

    def __init__(self, play_: Any, *calls: tuple[str, tuple, dict], **params: Any) -> None:
        self.answer = f"结果 #{play_.rng.randint(100, 999)}"  # what the tool returns this run
        seen = play_.run("guard_run", calls=[[name, list(args), kwargs] for name, args, kwargs in calls],
                         result=self.answer, **params)
        if seen.get("not_callable"):
            raise Fail("RepeatGuard() 的实例要能被调用：写 async def __call__(self, tool_fn, *args, max_retries=3, **kwargs)")
        for record in seen["tools"].values():
            tool_awaited(record)
        self.outs = [expect_pair(out) for out in seen["outs"]]
        self.calls = {name: record["calls"] for name, record in seen["tools"].items()}
        self.refused = seen["refused"]


WEATHER = ("search", ("上海",), {})


def check_first(p: Any) -> None:
    run = Guarded(p, WEATHER)
    [(result, error)] = run.outs
    if (result, error) != (run.answer, None) or run.calls["search"] != 1:
        raise Fail(f"第一次调用应正常执行并返回 (结果, None)，得到 ({result!r}, {error!r})，调用 {run.calls['search']} 次")


def check_repeat(p: Any) -> None:
    run = Guarded(p, *[("search", ("上海",), {"unit": "c"})] * 5)
    if run.calls["search"] != 1:
        raise Fail(f"同一工具、同样参数调用 5 次，工具只应真正执行 1 次，实际 {run.calls['search']} 次")
    if any(error is None for _, error in run.outs[1:]):
        raise Fail("重复的调用应返回 (None, 错误说明)，不是再给一次结果")


def check_message(p: Any) -> None:
    error = Guarded(p, WEATHER, WEATHER).outs[1][1]
    if not error or "重复" not in str(error):
        raise Fail(f"错误说明里要写明「重复调用」，模型才知道别再调了，得到 {error!r}")


def check_different(p: Any) -> None:
    run = Guarded(p, WEATHER, ("search", ("北京",), {}), ("search", ("上海",), {"unit": "f"}))
    if run.calls["search"] != 3:
        raise Fail(f"参数不同就不是重复，3 次调用都应执行，实际执行 {run.calls['search']} 次")


def check_tools(p: Any) -> None:
    run = Guarded(p, ("get_weather", ("上海",), {}), ("search_flights", ("上海",), {}))
    if run.calls != {"get_weather": 1, "search_flights": 1}:
        raise Fail("不同的工具用同样的参数不算重复（按工具名 + 参数判断）")


def check_order(p: Any) -> None:
    run = Guarded(p, ("search", (), {"origin": "北京", "destination": "上海"}),
                  ("search", (), {"destination": "上海", "origin": "北京"}))
    if run.calls["search"] != 1:
        raise Fail("关键字参数顺序不同仍是同一个调用：比较前先排序（例如 sorted(kwargs.items())）")


def check_transient(p: Any) -> None:
    call = ("search", ("上海",), {"max_retries": 0})
    run = Guarded(p, call, call, call, plans={"search": ["timeout", "timeout", "ok"]})
    if run.calls["search"] != 3 or run.outs[-1] != (run.answer, None):
        raise Fail(f"超时这样的暂时性失败之后，再调一次是合理的，不应拦下：实际执行 {run.calls['search']} 次，"
                   f"最后得到 {run.outs[-1]!r}")


def check_fatal(p: Any) -> None:
    call = ("search", ("/etc/secret",), {})
    run = Guarded(p, call, call, plans={"search": ["permission"]})
    if run.calls["search"] != 1:
        raise Fail(f"权限错误再调一次结果也不会变，第二次应拦下，实际执行 {run.calls['search']} 次")


def check_independent(p: Any) -> None:
    run = Guarded(p, WEATHER, WEATHER, fresh=True)
    if run.calls["search"] != 2:
        raise Fail("两个 RepeatGuard() 应各记各的：第二个守卫没见过这个调用，却拦下了它")


def check_count(p: Any) -> None:
    run = Guarded(p, *[WEATHER] * 4)
    if run.refused != 3:
        raise Fail(f"guard.refused 应记录拦下了几次（3），得到 {run.refused!r}")


EXERCISE = Exercise("08", "08_pitfalls", "常见坑 7：拦住重复的工具调用", "RepeatGuard", (
    Check("first_call_runs", "第一次调用正常执行", "没见过的调用交给 toolkit.call_tool_with_retry", check_first),
    Check("repeat_refused_without_running", "同一工具、同样参数的重复调用不再执行", "用 (工具名, 参数) 做 key 记在 self 里",
          check_repeat),
    Check("repeat_message_says_why", "拦下时的错误说明写明「重复调用」", "告诉模型结果不会变，请换参数或直接回答", check_message),
    Check("different_arguments_run", "参数不同的调用照常执行", "key 里要包含 args 和 kwargs", check_different),
    Check("different_tools_run", "不同工具、同样参数不算重复", "key 里要包含工具名 tool_fn.__name__", check_tools),
    Check("keyword_order_irrelevant", "关键字参数的顺序不影响判断", "sorted(kwargs.items())", check_order),
    Check("transient_failure_may_repeat", "暂时性失败（超时）之后允许再调", "只记住成功或不可重试的结果", check_transient),
    Check("fatal_failure_refused", "不可重试的失败（权限）之后再调同样的参数：拦下", "classify_error 判断；或看错误是否可重试",
          check_fatal),
    Check("guards_independent", "两个 RepeatGuard 各记各的", "用 __init__ 里建好的 self.seen，不要用类属性或全局变量", check_independent),
    Check("refused_count", "guard.refused 记录拦下的次数", "每拦下一次 self.refused += 1", check_count),
), probes=(guard_run,))
