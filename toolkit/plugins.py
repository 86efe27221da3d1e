"""Plug-in points: a student's parse, truncate or retry function in place of ours, and the checks for what
a plug-in returns.

`ToolExecutor(parse=..., truncate=..., retry=...)` runs the student's piece
through the adapters here, and `plugin_message` checks what run_agent's
format_message returns before the model reads it. Each adapter runs the piece
under toolkit.guard.run_plugin: a plug-in that fails in any way, while it runs
or while the toolkit reads what it returned (the wrong type, a value json
refuses), becomes a `PluginError`, which the executor turns into an error
ToolResult with error_code PLUGIN_ERROR naming the plug-in. The retry plug-in
runs in a task of its own, so a retry that cancels its own slow attempt and lets
the CancelledError out fails like any other. What a plug-in returns is then
treated like a tool's output.
"""
from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import replace
from typing import Any, Awaitable, Callable, TypeVar, Union

from . import wording
from .clock import get_clock
from .fitting import fit_for_model
from .guard import PluginError, cancelled_from_outside, failed, own_failure, run_plugin
from .results import FATAL, ErrorCode, ErrorInfo, PartialResult, classify_error, unwrap_envelope
from .retry import Attempt, RetryOutcome, RetryPolicy
from .safety import redact_value, tool_output_warnings
from .shrink import dumps, shrink_json

__all__ = ["ParseFn", "TruncateFn", "RetryFn", "apply_parse", "apply_truncate", "run_retry_plugin", "plugin_message",
           "DECISION_MARK", "MESSAGE_FIELDS_CHARS"]

MESSAGE_FIELDS_CHARS = 2000  # a plug-in's tool message may hold the result's budget plus this much around it

ParseFn = Callable[[Any, int], Any]
"""parse(raw_output, max_chars) -> the value the model sees (JSON-serializable, its JSON at most max_chars)."""
TruncateFn = Callable[[str, int], str]
"""truncate(text, max_chars) -> text of at most max_chars characters."""
RetryFn = Callable[..., Union[tuple, Awaitable[tuple]]]
"""retry(tool_fn, *args, max_retries=N, **kwargs) -> (result, error), sync or async."""

T = TypeVar("T")


def _wrong(plugin: str, expected: str, got: Any) -> PluginError:
    if inspect.isawaitable(got):
        if inspect.iscoroutine(got):
            got.close()  # no "coroutine was never awaited" warning
        shown = "未等待的协程（缺少 await）"
    else:
        shown = type(got).__name__
    return PluginError(plugin, wording.plugin_wrong_type(plugin, expected, shown))


def apply_parse(parse: ParseFn, raw: Any, max_chars: int) -> tuple[Any, bool]:
    """parse(raw, max_chars), checked: JSON-serializable, and within max_chars
    (a string's length, any other value's JSON length). Returns (the value as
    plain data: a str, or what its JSON reads back as, so none of the plug-in's
    own objects travels on; whether it differs from `raw`). Raises PluginError."""
    return run_plugin("parse", lambda: _parsed(parse(raw, max_chars), raw, max_chars))


def _parsed(value: Any, raw: Any, max_chars: int) -> tuple[Any, bool]:
    if inspect.isawaitable(value):
        raise _wrong("parse", "可以转成 JSON 的值", value)
    changed = not (value is raw or value == raw)
    if isinstance(value, str):
        size = len(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            raise _wrong("parse", "可以转成 JSON 的值", value) from None
        value, size = json.loads(text), len(text)
    if size > max_chars:
        raise PluginError("parse", wording.plugin_wrong_type("parse", f"{max_chars} 个字符以内的结果",
                                                             f"{size} 个字符"))
    return value, changed


def apply_truncate(truncate: TruncateFn, text: str, max_chars: int) -> str:
    """truncate(text, max_chars), checked: a str of at most max_chars characters. Raises PluginError."""
    return run_plugin("truncate", lambda: _truncated(truncate(text, max_chars), max_chars))


def _truncated(cut: Any, max_chars: int) -> str:
    if not isinstance(cut, str):
        raise _wrong("truncate", "字符串 str", cut)
    if len(cut) > max_chars:
        raise PluginError("truncate", wording.plugin_wrong_type("truncate", f"不超过 {max_chars} 个字符的字符串",
                                                                f"{len(cut)} 个字符"))
    return cut


class _Counted:
    """The tool as the student's retry sees it: every call is recorded as an Attempt."""

    def __init__(self, tool_fn: Callable[..., Any], on_start: Callable[[int, float], None] | None,
                 on_end: Callable[[Attempt], None] | None) -> None:
        self.tool_fn, self.on_start, self.on_end = tool_fn, on_start, on_end
        self.attempts: list[Attempt] = []
        self.last_exception: Exception | None = None
        self.last_value: Any = None  # the last call's return value, and its envelope opened once
        self.last_opened: tuple[Any, Any, ErrorInfo | None] = (None, None, None)
        self.awaitables: list[Any] = []  # the async tool's coroutines, closed if the retry never awaits them
        self.__name__ = getattr(tool_fn, "__name__", "tool")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        n, t0 = len(self.attempts) + 1, get_clock().now()
        if self.on_start is not None:
            self.on_start(n, t0)
        try:
            value = self.tool_fn(*args, **kwargs)
        except Exception as exc:
            self._record(n, t0, None, exc)
            raise
        if inspect.isawaitable(value):
            self.awaitables.append(value)
            return self._finish(value, n, t0)
        self._record(n, t0, value, None)
        return value

    async def _finish(self, value: Awaitable[Any], n: int, t0: float) -> Any:
        try:
            result = await value
        except Exception as exc:
            self._record(n, t0, None, exc)
            raise
        self._record(n, t0, result, None)
        return result

    def _record(self, n: int, t0: float, value: Any, exc: Exception | None) -> None:
        self.last_exception = exc
        if exc is None:
            self.last_value, self.last_opened = value, unwrap_envelope(value)
        info = classify_error(exc) if exc is not None else self.last_opened[2]
        if info is None:
            attempt = Attempt(n, t0, get_clock().now(), "partial" if isinstance(value, PartialResult) else "ok")
        else:
            attempt = Attempt(n, t0, get_clock().now(), "timeout" if info.error_code == ErrorCode.TIMEOUT else "error",
                              info.error_type, info.error_code, info.message)
        self.attempts.append(attempt)
        if self.on_end is not None:
            self.on_end(attempt)


async def run_retry_plugin(retry: RetryFn, policy: RetryPolicy, tool_fn: Callable[..., Any], args: tuple,
                           kwargs: dict, *, on_attempt: Callable[[Attempt], None] | None = None,
                           on_attempt_start: Callable[[int, float], None] | None = None) -> RetryOutcome:
    """Run the student's retry as `retry(tool_fn, *args, max_retries=..., **kwargs)` and check it.

    The tool it receives records each call, so the outcome has attempts (with
    the gaps between them as waits) like call_tool_with_retry's. A tool
    argument named tool_fn or max_retries is passed inside a closure instead.
    Raises PluginError when retry fails or does not return (result, error)
    with error None or a str.
    """
    start = get_clock().now()
    counted = _Counted(tool_fn, on_attempt_start, on_attempt)
    try:
        return await _in_own_task(_retried(retry, policy, counted, args, kwargs, start))
    finally:
        for pending in counted.awaitables:  # a sync retry around an async tool never awaits it
            if inspect.iscoroutine(pending) and inspect.getcoroutinestate(pending) == inspect.CORO_CREATED:
                pending.close()


async def _retried(retry: RetryFn, policy: RetryPolicy, counted: "_Counted", args: tuple, kwargs: dict,
                   start: float) -> RetryOutcome:
    """The retry plug-in called (and awaited when it is async), and what it returned checked."""
    if "tool_fn" in kwargs or "max_retries" in kwargs:
        value = retry(lambda: counted(*args, **kwargs), max_retries=policy.max_retries)
    else:
        value = retry(counted, *args, max_retries=policy.max_retries, **kwargs)
    if inspect.isawaitable(value):
        value = await value
    return _outcome(counted, value, start)


async def _in_own_task(work: Awaitable[T]) -> T:
    """Await the retry plug-in's `work` in a task of its own, as run_plugin runs a sync plug-in: what fails
    there becomes a PluginError, raised inside the task (asyncio lets a BaseException that is not an Exception
    out of the event loop itself). Its own task, so a retry that cancels the task it runs in
    (`asyncio.current_task().cancel()`) cancels that task, not the caller's: Task.cancelling() cannot tell such
    a cancel from one from outside when both hit the same task. A cancellation from outside reaches the
    caller's task, which cancels the plug-in's task in turn, and propagates (a caller's asyncio.timeout still
    becomes TimeoutError)."""
    task = asyncio.ensure_future(_guarded(work))  # copies the context: the clock (use_clock) goes along
    try:
        return await task
    except asyncio.CancelledError:
        if cancelled_from_outside() or not task.cancelled():
            raise
        raise failed("retry", asyncio.CancelledError()) from None  # the plug-in cancelled its own task


async def _guarded(work: Awaitable[T]) -> T:
    try:
        return await work
    except PluginError:
        raise
    except BaseException as exc:  # the plug-in boundary, awaited: the retry fails in any way (GeneratorExit too)
        if not own_failure(exc):
            raise
        raise failed("retry", exc) from exc


def _outcome(counted: "_Counted", value: Any, start: float) -> RetryOutcome:
    """Check the retry's return value and build the RetryOutcome from it and the recorded attempts."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise _wrong("retry", "(result, error) 二元组", value)
    result, error = value
    if error is not None and not isinstance(error, str):
        raise _wrong("retry", "(result, error)，error 为 None 或字符串", error)
    if inspect.isawaitable(result):
        raise _wrong("retry", "(result, error)，result 是工具的返回值", result)
    attempts = [replace(a, wait_after=max(b.start - a.end, 0.0))
                for a, b in zip(counted.attempts, counted.attempts[1:])]
    attempts += counted.attempts[len(attempts):]
    # the tool's last answer was opened when it came; a value the retry made up is opened here
    data, source, opened = counted.last_opened if result is counted.last_value else unwrap_envelope(result)
    info: ErrorInfo | None = None
    if error is None and opened is not None:  # the tool said it failed (its error envelope): a retry that let
        error, info = opened.message, opened  # the envelope through as a success does not make it one
    elif error is not None:
        if counted.last_exception is not None:
            found = classify_error(counted.last_exception)
        else:
            found = opened or ErrorInfo(FATAL, ErrorCode.TOOL_ERROR, error)
        info = ErrorInfo(found.error_type, found.error_code, error, found.retry_after)
    return RetryOutcome(result, error, trace=attempts, info=info, elapsed=get_clock().now() - start,
                        data=data, source=source)


DECISION_MARK = "[DECISION]"  # the line a decision takes after a plug-in's tool message that is not a JSON object


def plugin_message(message: Any, call_id: str, max_chars: int, decision: dict | None = None) -> dict:
    """What a format_message plug-in returned, as the Chat Completions API gets it, treated like tool output.

    Only {"role": "tool", "tool_call_id": call_id, "content"} pass: no other key
    (tool_calls, name, ...), no other role, and the call id the model asked for.
    The content is kept within `max_chars` (JSON shrinks as JSON, other text
    keeps head + tail: toolkit.fitting; a warning comes on top), its secrets are masked (a JSON content
    field by field, toolkit.safety.redact_value), and instruction-like text gets
    the warnings a tool message gets: a JSON object content gains "warnings"
    after its "status", other text a first line. `decision` (the road's {"action", "suggestion"} as the model
    reads it, toolkit.messages.decision_for_model) reaches the model whatever the plug-in wrote: a JSON object
    gains "decision" (unless it has one; the plug-in's own text is kept), other text a last line
    `[DECISION] {...}`; room for it is kept within `max_chars`. Raises TypeError (in Chinese)
    when `message` is not a dict with a text "content".
    """
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        got = f"content 为 {type(content).__name__} 的 dict" if isinstance(message, dict) else type(message).__name__
        raise TypeError(f"format_message 应返回带 content 字符串的消息 dict（{{\"role\": \"tool\", "
                        f"\"tool_call_id\": …, \"content\": …}}），实际返回了 {got}")
    field = None if decision is None else json.dumps(decision, ensure_ascii=False)  # the decision, not tool data
    text, _ = fit_for_model(content, max(1, max_chars - (0 if field is None else len(field) + 16)))
    try:
        parsed = json.loads(text) if text.lstrip()[:1] == "{" else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):  # a JSON object stays one: secrets masked by field, warnings as a field
        value = redact_value(parsed)
        if value is not parsed and len(dumps(value)) > max_chars:  # written out again, it may differ in length
            value = shrink_json(value, max_chars)
    else:
        value = redact_value(text)
    warnings = tool_output_warnings(value)
    if isinstance(value, dict):
        if warnings:  # right after the status, as in the toolkit's own tool messages
            head = {"status": value.pop("status")} if "status" in value else {}
            value = {**head, "warnings": warnings, **value}
        if value is not parsed:  # nothing to mask or flag: the plug-in's own text stands, as it wrote it
            text = dumps(value)
        if field is not None and "decision" not in value:  # before the closing brace: the plug-in's text is kept
            body = text.rstrip()[:-1].rstrip()
            text = f'{body}{"" if body.endswith("{") else ", "}"decision": {field}}}'
    else:
        text = value if isinstance(value, str) else dumps(value)
        if warnings:
            text = f"⚠ {warnings[0]}\n{text}"
        if field is not None:
            text = f"{text}\n{DECISION_MARK} {field}"
    return {"role": "tool", "tool_call_id": call_id, "content": text}
