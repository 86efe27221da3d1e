"""Exercise 06: careful_retry — an executor retry policy that never repeats a write without an idempotency key."""
from __future__ import annotations

from typing import Any

from ._core import Check, Exercise, Fail, expect_pair, no_real_sleep, tool_awaited
from ._tools import retry_run

WRITE_TOOLS = ("create_order", "place_order", "transfer_money", "send_email")  # the exercise's WRITE_TOOLS


def _receipt(play: Any, name: str) -> dict:
    """What a write tool returns this run (its figures drawn per run)."""
    return {"status": "ok", "tool": name, "id": f"A-{play.rng.randint(1000, 9999)}"}


def _run(play: Any, plan: list[str], *args: Any, name: str = "create_order", waits: bool = False,
         result: Any = None, **kwargs: Any) -> tuple[Any, Any, dict]:
    # a write tool is known by its name only: the executor hands the retry a wrapper that keeps the name
    seen = play.run("retry_run", plan=plan, args=args, kwargs=kwargs, name=name,
                    result=result if result is not None else _receipt(play, name))
    tool_awaited(seen)
    if waits:
        no_real_sleep(play)
    result, error = expect_pair(seen["value"])
    return result, error, seen


def _write_args(play: Any) -> dict:
    return {"item": play.rng.choice(["显示器", "键盘", "鼠标", "耳机"]), "quantity": play.rng.randint(1, 9)}


def _reads_still_retried(play: Any, rule: str) -> None:
    """The other half of a rule about not retrying: a read that timed out is retried. An answer that retries
    nothing keeps every "do not retry" rule and does nothing; it earns none of them."""
    _, error, seen = _run(play, ["timeout", "ok"], "上海", name="get_weather", result={"上海": "晴"})
    if seen["calls"] != 2 or error is not None:
        raise Fail(f"{rule}，但读操作 get_weather 超时一次后应照常重试（再调用一次就成功），你的函数调用了 "
                   f"{seen['calls']} 次、error={error!r}：什么都不重试，这一条也算不上做到了")


def check_write_once(play: Any) -> None:
    for name in WRITE_TOOLS:  # every write tool, not only the one in the examples
        result, error, seen = _run(play, ["timeout", "ok"], name=name, **_write_args(play))
        if seen["calls"] != 1:
            raise Fail(f"写操作 {name} 超时后可能已经生效了，没有 idempotency_key 时不能重试；工具被调用了 {seen['calls']} 次"
                       + ("（WRITE_TOOLS 里的每个工具都是写操作，不只 create_order）" if name != "create_order" else ""))
        if not error or result is not None:
            raise Fail(f"{name}：应返回 (None, 错误说明)，得到 ({result!r}, {error!r})")
    _reads_still_retried(play, "没有幂等键的写操作不重试")


def check_write_says_why(play: Any) -> None:
    _, error, _ = _run(play, ["timeout"], name="transfer_money", to="李雷", amount=play.rng.randint(10, 500))
    if not error or not any(word in str(error) for word in ("idempotency_key", "幂等")):
        raise Fail(f"transfer_money 超时：错误说明要告诉模型为什么没有重试（写操作、缺少 idempotency_key），得到 {error!r}")
    _reads_still_retried(play, "写操作的错误说明写出了原因")


def check_blank_key(play: Any) -> None:
    for key in ("", "   "):
        _, error, seen = _run(play, ["timeout", "ok"], name="send_email", to="li@example.com", idempotency_key=key)
        if seen["calls"] != 1 or not error:
            raise Fail(f"send_email 带 idempotency_key={key!r}：等于没有幂等键（服务端没法靠它去重），不能重试：工具被调用了 "
                       f"{seen['calls']} 次，error={error!r}")
    _reads_still_retried(play, "空的幂等键没有重试")


def check_write_with_key(play: Any) -> None:
    key = f"order-{play.rng.getrandbits(32):08x}"
    _, error, seen = _run(play, ["timeout", "timeout", "ok"], name="place_order", idempotency_key=key,
                          **_write_args(play))
    if error is not None or seen["calls"] != 3:
        raise Fail(f"带 idempotency_key 的写操作可以安全重试：应调用 3 次后成功，实际 {seen['calls']} 次，error={error!r}")
    if seen["args"][-1][1].get("idempotency_key") != key:
        raise Fail("idempotency_key 也要原样传给工具（服务端靠它去重）")


def check_write_success(play: Any) -> None:
    receipt = _receipt(play, "create_order")
    result, error, seen = _run(play, ["ok"], result=receipt, **_write_args(play))
    if (result, error) != (receipt, None) or seen["calls"] != 1:
        raise Fail(f"写操作一次成功应返回 (结果, None)，得到 ({result!r}, {error!r})")


def check_read_retried(play: Any) -> None:
    weather = {"上海": play.rng.choice(["晴", "多云", "小雨"]), "temp_c": play.rng.randint(5, 35)}
    result, error, seen = _run(play, ["timeout", "connection", "ok"], "上海", name="get_weather", result=weather)
    if (result, error) != (weather, None) or seen["calls"] != 3:
        raise Fail(f"读操作的暂时性错误照常重试：应调用 3 次后成功，实际 {seen['calls']} 次，得到 ({result!r}, {error!r})")


def check_permission(play: Any) -> None:
    _, error, seen = _run(play, ["permission", "ok"], "/etc/secret", name="read_file")
    if seen["calls"] != 1 or not error:
        raise Fail(f"PermissionError 不可重试（原课程的执行器重试了它）：应调用 1 次并返回错误，实际 {seen['calls']} 次")
    _reads_still_retried(play, "PermissionError 没有重试")


def check_max_retries(play: Any) -> None:
    _, _, seen = _run(play, ["timeout"], "上海", name="get_weather", max_retries=2)
    if seen["calls"] != 3:
        raise Fail(f"max_retries=2 表示最多 3 次，实际调用了 {seen['calls']} 次")


def check_clock(play: Any) -> None:
    _, _, seen = _run(play, ["timeout", "ok"], "上海", name="get_weather", waits=True)
    if not seen["waits"]:
        raise Fail("重试前没有在模拟时钟上等待（可以直接用 toolkit.call_tool_with_retry，它会等）")


EXERCISE = Exercise("06", "06_executor", "执行器的重试策略：没有幂等键的写操作不重试", "careful_retry", (
    Check("write_without_key_runs_once", "没有 idempotency_key 的写操作（WRITE_TOOLS 里的每一个）超时后不重试",
          "tool_fn.__name__ 在 WRITE_TOOLS 里且 "
          "kwargs 里没有 idempotency_key：只调用一次", check_write_once),
    Check("write_without_key_says_why", "错误说明写出原因（写操作、缺少 idempotency_key）", "模型读到原因，才知道该问用户还是换参数",
          check_write_says_why),
    Check("blank_key_is_no_key", "idempotency_key 是空字符串或只有空格：等于没有，不重试",
          "判断时用 str(kwargs.get('idempotency_key') or '').strip()", check_blank_key),
    Check("write_with_key_retried", "带 idempotency_key 的写操作照常重试，key 原样传给工具", "有幂等键时服务端会去重，重试是安全的",
          check_write_with_key),
    Check("write_success", "写操作一次成功：返回 (结果, None)", "别忘了成功的情况", check_write_success),
    Check("read_tool_retried", "读操作的超时、连接错误照常重试", "交给 toolkit.call_tool_with_retry", check_read_retried),
    Check("permission_error_not_retried", "PermissionError 不重试（原课程执行器的 bug）", "call_tool_with_retry 已经做对了",
          check_permission),
    Check("max_retries_respected", "max_retries 被遵守", "把 max_retries 传下去", check_max_retries),
    Check("waits_on_clock", "重试前在模拟时钟上等待", "不要自己 time.sleep / asyncio.sleep", check_clock),
), probes=(retry_run,))
