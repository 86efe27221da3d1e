"""Every model-facing sentence the retry loop and the executor write, in one place.

The machinery decides with codes (`ErrorCode`, `RetryOutcome.gave_up`) and
asks this module for the words; no code reads these sentences back. Rewording
one here changes what the model and the student read, nothing else.
Imports nothing from the toolkit, so any module may use it.
"""
from __future__ import annotations

__all__ = ["GIVE_UP_REASONS", "samples", "seconds", "attempt_timed_out", "gave_up", "partial_missing", "circuit_open",
           "fallback_note", "fallback_unavailable_note", "fallback_refused", "unknown_tool", "arguments_not_json",
           "arguments_not_object", "arguments_invalid", "bad_tool_schema", "schema_too_slow", "plugin_failed",
           "plugin_wrong_type", "bad_tokens", "frozen_outcome", "not_a_tool",
           "unreadable_output", "max_retries_beside_policy", "bad_max_retries", "bad_seconds"]

GIVE_UP_REASONS = {
    "max_retries": "已重试 {r} 次仍未成功",
    "deadline": "剩余时间不足以再试一次（总时限 {d} 秒）",
    "budget": "本次运行的重试额度已用完，不再重试",
    "not_idempotent": "这是写操作，超时后可能已经生效，未自动重试",
}


def seconds(value: float) -> str:
    """A time the model reads, rounded as a person would say it: 0.957383 -> "0.96", 4.96 -> "5", 12.34 -> "12.3"."""
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.2g}" if value < 1 else f"{round(value, 1):g}"


def attempt_timed_out(timeout: float) -> str:
    """The TimeoutError text for an attempt cut off after `timeout` seconds."""
    return f"单次调用超过 {seconds(timeout)} 秒未返回，已取消"


def gave_up(message: str, attempts: int, why: str | None, deadline: float | None) -> str:
    """The final error: the last failure's message, how many attempts, and why no more were made.

    A first-attempt fatal error (why "fatal") is returned as it is.
    """
    if attempts <= 1 and why in (None, "fatal"):
        return message
    reason = GIVE_UP_REASONS.get(why or "", "").format(r=attempts - 1, d=seconds(deadline or 0))
    return f"{message}；共尝试 {attempts} 次" + (f"，{reason}" if reason else "")


def partial_missing(missing: str) -> str:
    return f"部分结果缺失：{missing}"


def circuit_open(tool: str, cooldown: float) -> str:
    return f"工具 {tool} 连续失败，已暂停调用 {seconds(cooldown)} 秒（熔断），请换用其他工具或稍后再试"


def fallback_note(tool: str, fallback: str) -> str:
    return f"工具 {tool} 连续失败，已暂停调用（熔断）；这是备用工具 {fallback} 的结果"


def fallback_unavailable_note(tool: str, fallback: str) -> str:
    return f"工具 {tool} 的服务暂时不可用（重试后仍失败）；这是备用工具 {fallback} 的结果"


def fallback_refused(tool: str, fallback: str, why: str, circuit_open: bool) -> str:
    """The fallback could not take the call's arguments; `circuit_open` says why it was asked (else: the tool's
    service was down after its retries)."""
    reason = f"工具 {tool} 已熔断" if circuit_open else f"工具 {tool} 的服务暂时不可用（重试后仍失败）"
    return f"{reason}，备用工具 {fallback} 不接受这组参数：{why}"


def unknown_tool(name: str, known: list[str]) -> str:
    return f"没有名为 {name or '（空）'} 的工具；可用工具：{'、'.join(known) or '（无）'}"


def arguments_not_json(tool: str, detail: str) -> str:
    return f"工具 {tool} 的参数不是合法 JSON（{detail}），请重新生成参数"


def arguments_not_object(tool: str, type_name: str) -> str:
    return f"工具 {tool} 的参数必须是 JSON 对象，收到的是 {type_name}"


def arguments_invalid(tool: str, where: str, detail: str) -> str:
    return f"工具 {tool} 的参数不符合定义：{where}: {detail}"


def bad_tool_schema(tool: str, detail: str) -> str:
    return f"工具 {tool} 的参数定义有误：{detail}"


def schema_too_slow(tool: str, limit: float) -> str:
    """An argument check that passed its time limit (toolkit.schemas): the schema is at fault, not the model."""
    return f"工具 {tool} 的参数没能在 {seconds(limit)} 秒内按它的参数定义检查完（定义过于复杂），这次没有调用它"


def plugin_failed(plugin: str, detail: str) -> str:
    """A student's plug-in (parse / truncate / retry) raised: not the tool's fault."""
    return f"执行器的 {plugin} 插件出错（{detail}）；这是插件代码的问题，不是工具本身的问题"


def plugin_wrong_type(plugin: str, expected: str, got: str) -> str:
    return f"执行器的 {plugin} 插件返回了 {got}，应返回 {expected}；这是插件代码的问题，不是工具本身的问题"


def unreadable_output(detail: str) -> str:
    """A tool returned a value that cannot be read at all (its own methods raise where the budget pass looks)."""
    return f"工具返回的值无法读取（{detail}）；这是工具代码的问题，重试无用"


def max_retries_beside_policy(max_retries: object, call: str) -> str:
    """The ValueError for max_retries and policy given together: one way per setting (a student's mistake)."""
    return f"max_retries 和 policy 只能给一个：重试次数是策略的一部分，请写成 {call}(max_retries={max_retries!r}, ...)"


def bad_max_retries(value: object) -> str:
    """The ValueError for a RetryPolicy whose max_retries is not an int >= 0 (a student's mistake)."""
    return f"max_retries 是第一次之后最多再试几次，应该是不小于 0 的整数，收到的是 {value!r}：请改成 0 或正整数，例如 3"


def bad_seconds(name: str, value: object) -> str:
    """The ValueError for a RetryPolicy time limit (attempt_timeout, deadline) that is not a positive number."""
    return f"{name} 应该是大于 0 的秒数，或者 None（不设限），收到的是 {value!r}：请改成正数或 None"


def bad_tokens(name: str, value: object) -> str:
    """The ValueError for a RetryBudget setting that is not a whole number of tokens >= 0."""
    return f"RetryBudget 的 {name} 应是不小于 0 的整数（令牌数），收到 {value!r}：请改成 0 或正整数"


def frozen_outcome(name: str) -> str:
    """The AttributeError for setting a field of a RetryOutcome, a record of what happened."""
    return f"RetryOutcome 是记录下来的结果，不能修改 {name}：需要不同的值请另建一个变量"


def not_a_tool(where: str, value: object) -> str:
    """The TypeError for a tool's result handed over where the tool itself is wanted (a student's mistake)."""
    return f"{where} 应是工具函数本身，收到 {type(value).__name__}：请传函数名，不要加括号调用它"


def samples() -> list[str]:
    """Every sentence above with example values (tests check that none looks like an instruction)."""
    return [attempt_timed_out(2.0), gave_up("请求超时", 4, "max_retries", None),
            gave_up("请求超时", 2, "deadline", 12.0), gave_up("限流", 3, "budget", None),
            gave_up("请求超时", 1, "not_idempotent", None), partial_missing("北京的天气接口超时"),
            circuit_open("get_weather", 30.0), fallback_note("get_weather", "get_weather_backup"),
            fallback_unavailable_note("get_weather", "get_weather_backup"),
            fallback_refused("get_weather", "get_weather_backup", "缺少参数 city", True),
            fallback_refused("get_weather", "get_weather_backup", "缺少参数 city", False),
            unknown_tool("get_wether", ["get_weather", "search_flights"]),
            arguments_not_json("get_weather", "Expecting value"), arguments_not_object("get_weather", "list"),
            arguments_invalid("get_weather", "city", "'火星' is not one of ['上海']"),
            bad_tool_schema("get_weather", "'no-such-type' is not valid"), schema_too_slow("get_weather", 1.0),
            plugin_failed("parse", "KeyError: 'data'"), plugin_wrong_type("truncate", "字符串 str", "NoneType"),
            unreadable_output("StoreClosed: 存储已关闭")]
