"""Exercise 06: careful_retry — an executor retry policy that never repeats a write without an idempotency key."""
from __future__ import annotations

from typing import Any, Callable

from ._core import Check, Exercise, Fail, call_maybe_async, simulate
from ._tools import Scripted, pair


def _run(fn: Callable, tool: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    async def go(clock: Any) -> Any:
        return pair(await call_maybe_async(fn, tool, *args, **kwargs))
    return simulate(go)[0]


def _order(plan: list[str]) -> Scripted:
    # named like a write tool; no attribute says so (the executor hands the retry a wrapper that keeps the name)
    return Scripted(plan, name="create_order", result={"status": "ok", "order_id": "A-1001"})


def check_write_once(fn: Callable) -> None:
    tool = _order(["timeout", "ok"])
    result, error = _run(fn, tool, item="显示器", quantity=1)
    if tool.calls != 1:
        raise Fail(f"写操作超时后可能已经下单成功，没有 idempotency_key 时不能重试；工具被调用了 {tool.calls} 次")
    if not error or result is not None:
        raise Fail(f"应返回 (None, 错误说明)，得到 ({result!r}, {error!r})")


def check_write_says_why(fn: Callable) -> None:
    tool = _order(["timeout"])
    _, error = _run(fn, tool, item="显示器", quantity=1)
    if not error or not any(word in str(error) for word in ("idempotency_key", "幂等")):
        raise Fail(f"错误说明要告诉模型为什么没有重试（写操作、缺少 idempotency_key），得到 {error!r}")


def check_write_with_key(fn: Callable) -> None:
    tool = _order(["timeout", "timeout", "ok"])
    result, error = _run(fn, tool, item="显示器", quantity=1, idempotency_key="order-7f3a")
    if error is not None or tool.calls != 3:
        raise Fail(f"带 idempotency_key 的写操作可以安全重试：应调用 3 次后成功，实际 {tool.calls} 次，error={error!r}")
    if tool.args[-1][1].get("idempotency_key") != "order-7f3a":
        raise Fail("idempotency_key 也要原样传给工具（服务端靠它去重）")


def check_write_success(fn: Callable) -> None:
    tool = _order(["ok"])
    result, error = _run(fn, tool, item="显示器", quantity=1)
    if (result, error) != ({"status": "ok", "order_id": "A-1001"}, None) or tool.calls != 1:
        raise Fail(f"写操作一次成功应返回 (结果, None)，得到 ({result!r}, {error!r})")


def check_read_retried(fn: Callable) -> None:
    tool = Scripted(["timeout", "connection", "ok"], name="get_weather", result={"上海": "晴"})
    result, error = _run(fn, tool, "上海")
    if (result, error) != ({"上海": "晴"}, None) or tool.calls != 3:
        raise Fail(f"读操作的暂时性错误照常重试：应调用 3 次后成功，实际 {tool.calls} 次，得到 ({result!r}, {error!r})")


def check_permission(fn: Callable) -> None:
    tool = Scripted(["permission", "ok"], name="read_file")
    result, error = _run(fn, tool, "/etc/secret")
    if tool.calls != 1 or not error:
        raise Fail(f"PermissionError 不可重试（原课程的执行器重试了它）：应调用 1 次并返回错误，实际 {tool.calls} 次")


def check_max_retries(fn: Callable) -> None:
    tool = Scripted(["timeout"], name="get_weather")
    _run(fn, tool, "上海", max_retries=2)
    if tool.calls != 3:
        raise Fail(f"max_retries=2 表示最多 3 次，实际调用了 {tool.calls} 次")


def check_clock(fn: Callable) -> None:
    tool = Scripted(["timeout", "ok"], name="get_weather")

    async def go(clock: Any) -> Any:
        return pair(await call_maybe_async(fn, tool, "上海"))
    _, clock = simulate(go)
    if not clock.sleeps:
        raise Fail("重试前没有在模拟时钟上等待（可以直接用 toolkit.call_tool_with_retry，它会等）")


EXERCISE = Exercise("06", "06_executor", "执行器的重试策略：没有幂等键的写操作不重试", "careful_retry", (
    Check("write_without_key_runs_once", "没有 idempotency_key 的写操作超时后不重试", "tool_fn.__name__ 在 WRITE_TOOLS 里且 "
          "kwargs 里没有 idempotency_key：只调用一次", check_write_once),
    Check("write_without_key_says_why", "错误说明写出原因（写操作、缺少 idempotency_key）", "模型读到原因，才知道该问用户还是换参数",
          check_write_says_why),
    Check("write_with_key_retried", "带 idempotency_key 的写操作照常重试，key 原样传给工具", "有幂等键时服务端会去重，重试是安全的",
          check_write_with_key),
    Check("write_success", "写操作一次成功：返回 (结果, None)", "别忘了成功的情况", check_write_success),
    Check("read_tool_retried", "读操作的超时、连接错误照常重试", "交给 toolkit.call_tool_with_retry", check_read_retried),
    Check("permission_error_not_retried", "PermissionError 不重试（原课程执行器的 bug）", "call_tool_with_retry 已经做对了",
          check_permission),
    Check("max_retries_respected", "max_retries 被遵守", "把 max_retries 传下去", check_max_retries),
    Check("waits_on_clock", "重试前在模拟时钟上等待", "不要自己 time.sleep", check_clock),
))
