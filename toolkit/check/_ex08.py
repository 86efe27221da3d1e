"""Exercise 08: RepeatGuard — pitfall 7, the same tool called again and again with the same arguments."""
from __future__ import annotations

from typing import Any, Callable

from ._core import Check, Exercise, Fail, call_maybe_async, simulate
from ._tools import Scripted, pair


def _new(cls: Callable) -> Any:
    guard = cls()
    if not callable(guard):
        raise Fail("RepeatGuard() 的实例要能被调用：guard(tool_fn, *args, max_retries=3, **kwargs)")
    return guard


def _calls(guard: Any, *calls: tuple[Any, tuple, dict]) -> list[tuple[Any, Any]]:
    async def go(clock: Any) -> Any:
        return [pair(await call_maybe_async(guard, tool, *args, **kwargs)) for tool, args, kwargs in calls]
    return simulate(go)[0]


def check_first(cls: Callable) -> None:
    tool = Scripted(["ok"], result={"上海": "晴"})
    [(result, error)] = _calls(_new(cls), (tool, ("上海",), {}))
    if (result, error) != ({"上海": "晴"}, None) or tool.calls != 1:
        raise Fail(f"第一次调用应正常执行并返回 (结果, None)，得到 ({result!r}, {error!r})，调用 {tool.calls} 次")


def check_repeat(cls: Callable) -> None:
    tool = Scripted(["ok"])
    outs = _calls(_new(cls), *[(tool, ("上海",), {"unit": "c"})] * 5)
    if tool.calls != 1:
        raise Fail(f"同一工具、同样参数调用 5 次，工具只应真正执行 1 次，实际 {tool.calls} 次")
    if any(error is None for _, error in outs[1:]):
        raise Fail("重复的调用应返回 (None, 错误说明)，不是再给一次结果")


def check_message(cls: Callable) -> None:
    tool = Scripted(["ok"])
    outs = _calls(_new(cls), (tool, ("上海",), {}), (tool, ("上海",), {}))
    error = outs[1][1]
    if not error or "重复" not in str(error):
        raise Fail(f"错误说明里要写明「重复调用」，模型才知道别再调了，得到 {error!r}")


def check_different(cls: Callable) -> None:
    tool = Scripted(["ok"])
    _calls(_new(cls), (tool, ("上海",), {}), (tool, ("北京",), {}), (tool, ("上海",), {"unit": "f"}))
    if tool.calls != 3:
        raise Fail(f"参数不同就不是重复，3 次调用都应执行，实际执行 {tool.calls} 次")


def check_tools(cls: Callable) -> None:
    weather, flights = Scripted(["ok"], name="get_weather"), Scripted(["ok"], name="search_flights")
    _calls(_new(cls), (weather, ("上海",), {}), (flights, ("上海",), {}))
    if weather.calls != 1 or flights.calls != 1:
        raise Fail("不同的工具用同样的参数不算重复（按工具名 + 参数判断）")


def check_order(cls: Callable) -> None:
    tool = Scripted(["ok"])
    _calls(_new(cls), (tool, (), {"origin": "北京", "destination": "上海"}),
           (tool, (), {"destination": "上海", "origin": "北京"}))
    if tool.calls != 1:
        raise Fail("关键字参数顺序不同仍是同一个调用：比较前先排序（例如 sorted(kwargs.items())）")


def check_transient(cls: Callable) -> None:
    tool = Scripted(["timeout", "timeout", "ok"])
    outs = _calls(_new(cls), (tool, ("上海",), {"max_retries": 0}), (tool, ("上海",), {"max_retries": 0}),
                  (tool, ("上海",), {"max_retries": 0}))
    if tool.calls != 3 or outs[-1] != ("结果", None):
        raise Fail(f"超时这样的暂时性失败之后，再调一次是合理的，不应拦下：实际执行 {tool.calls} 次，最后得到 {outs[-1]!r}")


def check_fatal(cls: Callable) -> None:
    tool = Scripted(["permission"])
    _calls(_new(cls), (tool, ("/etc/secret",), {}), (tool, ("/etc/secret",), {}))
    if tool.calls != 1:
        raise Fail(f"权限错误再调一次结果也不会变，第二次应拦下，实际执行 {tool.calls} 次")


def check_independent(cls: Callable) -> None:
    tool = Scripted(["ok"])
    _calls(_new(cls), (tool, ("上海",), {}))
    _calls(_new(cls), (tool, ("上海",), {}))
    if tool.calls != 2:
        raise Fail("两个 RepeatGuard() 应各记各的：第二个守卫没见过这个调用，却拦下了它")


def check_count(cls: Callable) -> None:
    tool = Scripted(["ok"])
    guard = _new(cls)
    _calls(guard, *[(tool, ("上海",), {})] * 4)
    if getattr(guard, "refused", None) != 3:
        raise Fail(f"guard.refused 应记录拦下了几次（3），得到 {getattr(guard, 'refused', None)!r}")


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
))
