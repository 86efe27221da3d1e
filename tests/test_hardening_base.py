"""Never raises, third pass: what an `except Exception` lets through, from code the toolkit did not write.

GeneratorExit, a CancelledError and a BaseException subclass of one's own are not
Exceptions. Raised by a hook, a plug-in, a tool's answer rule or a wire format (code the
toolkit calls inline), each is that code's own failure, handled like an Exception
(toolkit.guard.run_plugin); a plug-in returning a value that fails while read is its
failure too. Only KeyboardInterrupt, SystemExit and a cancellation from outside
propagate. Also here: a retry plug-in that cancels the task it runs in, a wire format
that fails on every call, a ToolResult whose repr() meets a huge artifact, and schema
patterns applied in linear time.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from support import scripted_client
from tool_values import BASE_ERRORS, LazyRows
from toolkit import ErrorCode, SimulatedClock, Tool, ToolExecutor, ToolRegistry, ToolResult, format_tool_message, use_clock
from toolkit.agent import run_agent
from toolkit.hooks import call_hooks
from toolkit.redaction import safe_str
from toolkit.wire import BUILT_IN, FORMATS, WireFormat, field_of, make_call, register_format, wrap_result

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
KEY = "sk-proj-" + "Bq7Lm2Nx4Vc6Zr8Ts0Wy2Ud4Ke6Hf8Ja"
ERROR_IDS = [e.__name__ for e in BASE_ERRORS]


def _run(coro):
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(coro)


def _call(name: str = "t", call_id: str = "c1") -> dict:
    return {"id": call_id, "function": {"name": name, "arguments": "{}"}}


def _registry(fn, name: str = "t") -> ToolRegistry:
    return ToolRegistry([Tool(name, fn, "测试工具", SCHEMA)])


class Unprintable:
    """An object whose str() and repr() raise (a value describing a resource that has gone)."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    __repr__ = __str__


# --- safe_str, hooks ------------------------------------------------------------------------------------------

def test_safe_str_names_an_object_whose_str_raises():
    assert safe_str(Unprintable()) == "<Unprintable 对象，无法转为文字>"
    from toolkit.redaction import safe_repr
    assert safe_repr(Unprintable()) == "<Unprintable 对象>"


@pytest.mark.parametrize("error", BASE_ERRORS, ids=ERROR_IDS)
def test_a_hook_that_raises_any_base_exception_is_recorded(error):
    def hook(event):
        raise error("hook bug")

    executor = ToolExecutor(hooks=[hook])
    result = _run(executor.execute(lambda: "ok", "one"))
    assert result.status == "success" and len(executor.hook_errors) == 3
    assert executor.hook_errors[0].error == f"{error.__name__}: hook bug"
    client, _ = scripted_client([{"tool_calls": [("t", "{}")]}, {"content": "好的。"}])
    registry = _registry(lambda: "ok")
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("问", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry, hooks=[hook]))
    assert run.ok and run.tool_results[0].ok


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_from_a_hook_propagates(interrupt):
    def hook(event):
        raise interrupt()

    with pytest.raises(interrupt):
        call_hooks([hook], object(), [], "call_end")


# --- plug-ins that raise a BaseException, or return a value that fails while read -------------------------------

@pytest.mark.parametrize("error", BASE_ERRORS, ids=ERROR_IDS)
@pytest.mark.parametrize("where", ["parse", "truncate", "retry"])
def test_a_plugin_raising_anything_or_returning_what_cannot_be_read_is_a_plugin_error(where, error):
    def returns(*args, **kwargs):
        return LazyRows(["a", None])  # a result set whose cursor closed: its length cannot be read

    def raises(*args, **kwargs):
        raise error("plug-in bug")

    for plugin in (returns, raises):
        result = _run(ToolExecutor(**{where: plugin}).execute(lambda: "长" * 9000, "t"))
        assert result.status == "error" and result.error_code == ErrorCode.PLUGIN_ERROR, (plugin, result)
        assert where in result.error


# --- a retry plug-in that cancels the task it runs in ----------------------------------------------------------

async def _cancels_its_task_and_awaits(tool_fn, *args, max_retries=3, **kwargs):
    asyncio.current_task().cancel()
    await asyncio.sleep(0)
    return tool_fn(*args, **kwargs), None


async def _cancels_its_task_and_returns(tool_fn, *args, max_retries=3, **kwargs):
    asyncio.current_task().cancel()  # no await after it: the cancellation would hit the caller's next await
    return tool_fn(*args, **kwargs), None


def _sync_cancels_its_task(tool_fn, *args, max_retries=3, **kwargs):
    asyncio.current_task().cancel()
    return tool_fn(*args, **kwargs), None


async def _cancels_its_task_from_a_child(tool_fn, *args, max_retries=3, **kwargs):
    me = asyncio.current_task()
    asyncio.get_running_loop().call_soon(me.cancel)  # scheduled, as a helper task of the plug-in might do
    await asyncio.sleep(0.01)
    return tool_fn(*args, **kwargs), None


SELF_CANCELLING = [_cancels_its_task_and_awaits, _cancels_its_task_and_returns, _sync_cancels_its_task,
                   _cancels_its_task_from_a_child]


@pytest.mark.parametrize("retry", SELF_CANCELLING, ids=lambda f: f.__name__)
def test_a_retry_plugin_that_cancels_its_own_task_is_a_plugin_error(retry):
    result = _run(ToolExecutor(retry=retry).execute(lambda: "结果", "t"))
    assert result.status == "error" and result.error_code == ErrorCode.PLUGIN_ERROR
    assert "retry" in result.error and "CancelledError" in result.error
    [called] = _run(ToolExecutor(registry=_registry(lambda: "结果"), retry=retry).run_tool_calls([_call()]))
    assert called.error_code == ErrorCode.PLUGIN_ERROR and called.call_id == "c1"


@pytest.mark.parametrize("retry", SELF_CANCELLING, ids=lambda f: f.__name__)
def test_run_agent_answers_after_a_retry_plugin_cancels_its_own_task(retry):
    registry = _registry(lambda: "结果")
    client, requests = scripted_client([{"tool_calls": [("t", "{}")]}, {"content": "工具出错了。"}])
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("查一下", client=client, model="scripted", registry=registry,
                        executor=ToolExecutor(registry=registry, retry=retry))
    assert run.ok and run.tool_results[0].error_code == ErrorCode.PLUGIN_ERROR
    assert json.loads([m for m in requests[1]["messages"] if m["role"] == "tool"][0]["content"])["status"] == "error"


def test_a_cancellation_from_outside_still_propagates_through_the_plugins_own_task():
    started = asyncio.Event()

    async def waits(tool_fn, *args, max_retries=3, **kwargs):
        started.set()
        await asyncio.get_running_loop().create_future()  # never done
        return None, None

    async def main():
        task = asyncio.ensure_future(ToolExecutor(retry=waits).execute(lambda: 1, "t"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):
                await ToolExecutor(retry=waits).execute(lambda: 1, "t")

    asyncio.run(main())


# --- a wire format whose result_message raises anything, or fails on every call ----------------------------------

def _format(name: str, result_message) -> WireFormat:
    return WireFormat(name, tool_schema=lambda name, description, parameters: {"name": name},
                      result_message=result_message,
                      parse_call=lambda raw: make_call(field_of(raw, "id"), field_of(raw, "name"), None),
                      looks_like=lambda raw: False)


@pytest.fixture
def restore_formats():
    saved = dict(FORMATS)
    yield
    FORMATS.clear()
    FORMATS.update(saved)


@pytest.mark.parametrize("error", BASE_ERRORS, ids=ERROR_IDS)
def test_a_format_that_raises_anything_on_one_result_gives_an_error_result(error, restore_formats):
    def fussy(call_id, content, is_error):
        if "坏" in content:
            raise error("cannot wrap this one")
        return {"id": call_id, "content": content, "is_error": is_error}

    fmt = register_format(_format("fussy", fussy))
    message = format_tool_message("t", "call_7", ToolResult("t", "坏结果"), fmt=fmt.name)
    assert message["id"] == "call_7" and message["is_error"] is True
    content = json.loads(message["content"])
    assert content["error_code"] == "PLUGIN_ERROR" and error.__name__ in content["error"]


@pytest.mark.parametrize("error", BASE_ERRORS, ids=ERROR_IDS)
def test_a_format_that_raises_anything_on_the_samples_is_refused_at_registration(error, restore_formats):
    def broken(call_id, content, is_error):
        raise error("broken")

    with pytest.raises(ValueError, match="result_message"):
        register_format(_format("broken", broken))
    assert "broken" not in FORMATS


def test_a_format_that_cannot_write_the_error_result_is_refused_at_registration(restore_formats):
    """register_format tries the error result wrap_result falls back to: a format that fails on it is refused,
    so a registered format always has a way to tell the model a result did not arrive."""
    def no_errors(call_id, content, is_error):
        if is_error:
            raise KeyError("is_error")
        return {"id": call_id, "content": content}

    with pytest.raises(ValueError, match="result_message"):
        register_format(_format("no_errors", no_errors))


def test_a_format_that_passed_its_samples_and_fails_on_every_call_is_a_clear_value_error(restore_formats):
    """The one ValueError left (format_tool_message's docstring says so): no message in the format's own shape
    can be written, and the model cannot be handed a message the API would not accept."""
    calls = {"n": 0}

    def fails_after_registration(call_id, content, is_error):
        calls["n"] += 1
        if calls["n"] > 2:  # the two samples register_format tries
            raise GeneratorExit("worn out")
        return {"id": call_id, "content": content}

    fmt = register_format(_format("worn_out", fails_after_registration))
    with pytest.raises(ValueError, match="worn_out.*GeneratorExit.*GeneratorExit"):
        format_tool_message("t", "call_1", ToolResult("t", "ok"), fmt=fmt.name)


@pytest.mark.parametrize("error", [RuntimeError, *BASE_ERRORS], ids=["RuntimeError", *ERROR_IDS])
def test_a_replaced_built_in_format_that_fails_on_every_call_falls_back_to_the_built_in_shape(error,
                                                                                               restore_formats):
    calls = {"n": 0}

    def fails_after_registration(call_id, content, is_error):
        calls["n"] += 1
        if calls["n"] > 2:
            raise error("worn out")
        return {"role": "tool", "tool_call_id": call_id, "content": content, "extra": 1}

    register_format(_format("openai_chat", fails_after_registration), replace=True)
    message = format_tool_message("t", "call_1", ToolResult("t", "ok"))
    assert set(message) == {"role", "tool_call_id", "content"} and message["tool_call_id"] == "call_1"
    content = json.loads(message["content"])
    assert content["error_code"] == "PLUGIN_ERROR" and error.__name__ in content["error"]
    client, _ = scripted_client([{"tool_calls": [("t", "{}")]}, {"content": "没有拿到结果。"}])
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("问", client=client, model="scripted", registry=_registry(lambda: 1))
    assert run.ok
    assert wrap_result(BUILT_IN["openai_chat"], "c", "x", False) == {"role": "tool", "tool_call_id": "c",
                                                                      "content": "x"}


def test_a_format_returning_a_dict_subclass_is_copied_to_a_plain_dict(restore_formats):
    odd = type("Message", (dict,), {})
    fmt = register_format(_format("odd", lambda call_id, content, is_error: odd(id=call_id, content=content)))
    message = format_tool_message("t", "call_3", ToolResult("t", "ok"), fmt=fmt.name)
    assert type(message) is dict and message["id"] == "call_3"


# --- repr() of a result: bounded, redacted --------------------------------------------------------

@pytest.mark.parametrize("artifact", [
    "x" * 2_000_000, f"page with password={KEY} " * 1000, Unprintable(), 10 ** 100_000,
    {"rows": [{"token": KEY}] * 10_000}, [Unprintable()] * 3,
], ids=["2 MB text", "keys in text", "repr raises", "a 100,000-digit int", "10,000 rows", "a list of unprintables"])
def test_repr_of_a_result_is_bounded_redacted_and_never_raises(artifact):
    text = repr(ToolResult("t", "摘要", artifact=artifact))
    assert text.startswith("ToolResult(name='t', data='摘要'") and len(text) < 6000 and KEY[8:20] not in text


# --- a tool schema's pattern, applied to what the model sent: linear time, bounded length ----------------------

import re  # noqa: E402
import time  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# patterns Python's re takes exponential (or high polynomial) time on, as a tool author or an MCP server may write
CATASTROPHIC = [r"^(a+)+$", r"(a|a)*b", r"^(a|aa)+$", r"(x+x+)+y", r"^(\w+\s?)*$", r"^([a-z0-9]+-?)*[a-z0-9]+\.$"]


def _pattern_registry(pattern: str, key_pattern: str | None = None) -> tuple[ToolRegistry, Tool]:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    if key_pattern is not None:
        schema.update(patternProperties={key_pattern: {"type": "integer"}}, additionalProperties=False)
    tool = Tool("t", lambda **kw: kw, "测试工具", schema)
    return ToolRegistry([tool]), tool


def _fastest(fn, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-6)


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_schema_pattern_does_not_explode_on_the_models_argument(pattern):
    """With re, `^(a+)+$` on n characters of 'a' and a '!' takes 2^n steps: 22 characters cost 64x 16. The
    linear matcher: about 1.4x (the bound leaves room for a loaded machine; process time, fastest of 5)."""
    registry, tool = _pattern_registry(pattern, key_pattern=pattern)
    for field in ("s", "key"):  # the pattern applied to a value, and to a key (patternProperties)
        def check(n, field=field):
            args = {"s": "a" * n + "!"} if field == "s" else {"a" * n + "!": 1}
            return lambda: registry.check_arguments(tool, args)
        small, large = _fastest(check(16)), _fastest(check(22))
        assert large / small < 8, (field, small, large)
        _, error = check(4000)()  # the longest a pattern is applied to, at once
        assert error is not None and error.error_code == ErrorCode.INVALID_ARGUMENTS


@pytest.mark.parametrize("pattern, unit", [(r"\s+$", " "), (r"[a-z]+@[a-z]+\.com", "a"), (r"(\d+)-\d+x", "1"),
                                           (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$|今天", "2")])
def test_a_schema_pattern_costs_linear_time_up_to_the_length_cap(pattern, unit):
    """Patterns re.search takes n² steps on (a run it retries from every start): 10x the text costs about 10x."""
    registry, tool = _pattern_registry(pattern)
    small = _fastest(lambda: registry.check_arguments(tool, {"s": unit * 400 + "!"}))
    large = _fastest(lambda: registry.check_arguments(tool, {"s": unit * 4000 + "!"}))
    assert large / small < 30, (small, large)  # linear is about 10x, quadratic about 100x


def test_the_pattern_is_applied_to_at_most_4096_characters():
    from toolkit.patterns import PATTERN_MAX_CHARS
    registry, tool = _pattern_registry(r"^[a-z]+$")
    assert registry.check_arguments(tool, {"s": "a" * PATTERN_MAX_CHARS}) == ({"s": "a" * PATTERN_MAX_CHARS}, None)
    _, error = registry.check_arguments(tool, {"s": "a" * (PATTERN_MAX_CHARS + 1)})
    assert error.error_code == ErrorCode.INVALID_ARGUMENTS and "4096" in error.message and "超过" in error.message
    registry, tool = _pattern_registry(r"^x$", key_pattern=r"^k")
    _, error = registry.check_arguments(tool, {"k" * 5000: 1})
    assert error.error_code == ErrorCode.INVALID_ARGUMENTS


@pytest.mark.parametrize("pattern, why", [(r"^(a)\1$", "反向引用"), (r"^(?=a)", "环视"), (r"(?<!a)b", "环视"),
                                          (r"(?>a+)b", "原子分组"), (r"a++b", "占有量词"), (r"(a)?(?(1)b|c)", "条件分组"),
                                          (r"(", "不是合法的正则表达式"), (r"(?:a{1000}){1000}", "太大")])
def test_a_pattern_no_linear_engine_can_run_is_a_bad_tool_schema_saying_why(pattern, why):
    registry, tool = _pattern_registry(pattern)
    _, error = registry.check_arguments(tool, {"s": "a"})
    assert error.error_code == ErrorCode.BAD_TOOL_SCHEMA and why in error.message


def test_the_course_tools_patterns_still_read_dates_and_words():
    from toolkit.tools import default_registry
    registry = default_registry()
    flights = registry.get("search_flights")
    for date, ok in (("2025-01-02", True), ("今天", True), ("明天", True), ("明年", False), ("2025-1-2", False),
                     ("2025-01-02\n", True), ("x2025-01-02", False)):
        args, error = registry.check_arguments(flights, {"origin": "北京", "destination": "上海", "date": date})
        assert (error is None) == ok == bool(re.search(flights.parameters["properties"]["date"]["pattern"], date))


# the differential test: the linear matcher says what re.search says, on patterns re runs quickly
_atoms = st.sampled_from(["a", "b", ".", r"\d", r"\w", r"\s", r"\W", "[ab]", "[^a]", "[a-c]", "中", r"\.", "x"])


@st.composite
def _patterns(draw, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["atom", "atom", "group", "alt"] if depth < 2 else ["atom"]))
        part = draw(_atoms) if kind == "atom" else (
            f"({draw(_patterns(depth + 1))})" if kind == "group"
            else f"(?:{draw(_patterns(depth + 1))}|{draw(_patterns(depth + 1))})")
        part += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "{0,2}?"]))
        parts.append(part)
    anchors = draw(st.sampled_from([("", ""), ("^", ""), ("", "$"), ("^", "$"), (r"\b", ""), ("", r"\B"), (r"\A", r"\Z")]))
    flags = draw(st.sampled_from(["", "", "(?i)", "(?s)", "(?m)", "(?a)"])) if depth == 0 else ""
    return flags + anchors[0] + "".join(parts) + anchors[1]


@settings(max_examples=400, deadline=None, database=None)
@given(_patterns(), st.text(st.sampled_from("ab中x. 1\n_AB-"), max_size=12))
def test_the_linear_matcher_agrees_with_re_search(pattern, text):
    from toolkit.patterns import LinearPattern
    assert LinearPattern(pattern).search(text) == bool(re.search(pattern, text)), (pattern, text)


def test_pattern_properties_and_additional_properties_keep_their_meaning():
    registry, tool = _pattern_registry(r"^[a-z]+$", key_pattern=r"^n_\d+$")
    assert registry.check_arguments(tool, {"s": "abc", "n_1": 3})[1] is None
    assert registry.check_arguments(tool, {"n_1": "x"})[1].error_code == ErrorCode.INVALID_ARGUMENTS  # not an integer
    assert "不允许的参数名" in registry.check_arguments(tool, {"other": 1})[1].message
    assert "不符合格式" in registry.check_arguments(tool, {"s": "ABC"})[1].message
    nested = Tool("n", lambda **kw: kw, "嵌套", {"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "propertyNames": {"pattern": r"^(a+)+$"}}}}})
    registry = ToolRegistry([nested])
    _, error = registry.check_arguments(nested, {"rows": [{"a" * 40 + "!": 1}]})
    assert error.error_code == ErrorCode.INVALID_ARGUMENTS
    both = Tool("u", lambda **kw: kw, "两者", {"type": "object", "patternProperties": {"^a": {}},
                                             "unevaluatedProperties": False})
    assert ToolRegistry([both]).check_arguments(both, {"a": 1})[1].error_code == ErrorCode.BAD_TOOL_SCHEMA


# --- asyncio.run and a result whose repr raises -------------------------------------------------------------------

@pytest.mark.parametrize("where", ["check", "evaluate", "format_message"])
def test_an_async_plugin_whose_result_or_exception_cannot_be_repred_leaves_asyncio_working(where):
    """asyncio.run repr()s its finished task on the way out (checking its SIGINT handler): an async plug-in
    whose return value, or whose exception, raises in repr() made run_agent raise, and left that handler
    installed, so every later asyncio.run in the process raised as well."""
    class UnprintableError(Exception):
        __str__ = __repr__ = Unprintable.__str__

    async def returns(*args, **kwargs):
        return Unprintable()

    async def raises(*args, **kwargs):
        raise UnprintableError()

    for plugin in (returns, raises):
        client, _ = scripted_client([{"tool_calls": [("t", "{}")]}, {"content": "好的。"}])
        with use_clock(SimulatedClock(seed=0)):
            run = run_agent("问", client=client, model="scripted", registry=_registry(lambda: 1), **{where: plugin})
        assert run.ok
        if where != "check":
            assert run.tool_results[0].error_code == ErrorCode.PLUGIN_ERROR

        async def fine():
            return "还能用"

        assert asyncio.run(fine()) == "还能用"  # the next asyncio.run in the process still works


@pytest.mark.parametrize("error", BASE_ERRORS, ids=ERROR_IDS)
def test_an_answer_rule_raising_a_base_exception_is_reported(error):
    from toolkit.knowledge import ToolKnowledge, forget, teach
    from toolkit.verify import check_answer

    def rule(answer, data):
        raise error("rule raises")

    teach("base_rule_tool", ToolKnowledge(required={}, answer_rules=(rule,)))
    try:
        check = check_answer("1", ToolResult("base_rule_tool", {"x": 1}))
    finally:
        forget("base_rule_tool")
    assert not check.ok and check.mismatches == [f"答案规则 rule 出错：{error.__name__}: rule raises"]
