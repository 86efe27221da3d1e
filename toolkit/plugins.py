"""The executor's plug-in points: a student's parse, truncate or retry function in place of ours.

`ToolExecutor(parse=..., truncate=..., retry=...)` runs the student's piece
through the adapters here. Each adapter checks what the function returns; a
function that raises or returns the wrong type becomes a `PluginError`, which
the executor turns into an error ToolResult with error_code PLUGIN_ERROR
naming the plug-in. A student's bug never becomes an exception in the notebook.
"""
from __future__ import annotations

import inspect
import json
from dataclasses import replace
from typing import Any, Awaitable, Callable, Union

from . import wording
from .clock import get_clock
from .results import FATAL, ErrorCode, ErrorInfo, PartialResult, classify_error, safe_str, unwrap_envelope
from .retry import Attempt, RetryOutcome, RetryPolicy

__all__ = ["ParseFn", "TruncateFn", "RetryFn", "PluginError", "apply_parse", "apply_truncate", "run_retry_plugin"]

ParseFn = Callable[[Any, int], Any]
"""parse(raw_output, max_chars) -> the value the model sees (JSON-serializable, its JSON at most max_chars)."""
TruncateFn = Callable[[str, int], str]
"""truncate(text, max_chars) -> text of at most max_chars characters."""
RetryFn = Callable[..., Union[tuple, Awaitable[tuple]]]
"""retry(tool_fn, *args, max_retries=N, **kwargs) -> (result, error), sync or async."""


class PluginError(Exception):
    """A plug-in raised or returned the wrong type; `message` is the model-facing Chinese text."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.message = message


def _raised(plugin: str, exc: BaseException) -> PluginError:
    return PluginError(plugin, wording.plugin_failed(plugin, f"{type(exc).__name__}: {safe_str(exc, 200)}"))


def _wrong(plugin: str, expected: str, got: Any) -> PluginError:
    if inspect.isawaitable(got):
        close = getattr(got, "close", None)
        if close is not None:
            close()  # no "coroutine was never awaited" warning
        return PluginError(plugin, wording.plugin_wrong_type(plugin, expected, "未等待的协程（缺少 await）"))
    return PluginError(plugin, wording.plugin_wrong_type(plugin, expected, type(got).__name__))


def apply_parse(parse: ParseFn, raw: Any, max_chars: int) -> Any:
    """parse(raw, max_chars), checked: JSON-serializable, and within max_chars
    (a string's length, any other value's JSON length). Raises PluginError."""
    try:
        value = parse(raw, max_chars)
    except Exception as exc:
        raise _raised("parse", exc) from exc
    if inspect.isawaitable(value):
        raise _wrong("parse", "可以转成 JSON 的值", value)
    try:
        size = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise _wrong("parse", "可以转成 JSON 的值", value) from None
    if size > max_chars:
        raise PluginError("parse", wording.plugin_wrong_type("parse", f"不超过 {max_chars} 个字符的结果",
                                                             f"{size} 个字符"))
    return value


def apply_truncate(truncate: TruncateFn, text: str, max_chars: int) -> str:
    """truncate(text, max_chars), checked: a str of at most max_chars characters. Raises PluginError."""
    try:
        cut = truncate(text, max_chars)
    except Exception as exc:
        raise _raised("truncate", exc) from exc
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
            attempt = Attempt(n, t0, get_clock().now(), "timeout" if info.code == ErrorCode.TIMEOUT else "error",
                              info.error_type, info.code, info.message)
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
    Raises PluginError when retry raises or does not return (result, error)
    with error None or a str.
    """
    start = get_clock().now()
    counted = _Counted(tool_fn, on_attempt_start, on_attempt)
    try:
        return _outcome(counted, await _call_retry(retry, policy, counted, args, kwargs), start)
    finally:
        for pending in counted.awaitables:  # a sync retry around an async tool never awaits it
            if inspect.iscoroutine(pending) and inspect.getcoroutinestate(pending) == inspect.CORO_CREATED:
                pending.close()


async def _call_retry(retry: RetryFn, policy: RetryPolicy, counted: "_Counted", args: tuple, kwargs: dict) -> Any:
    try:
        if "tool_fn" in kwargs or "max_retries" in kwargs:
            value = retry(lambda: counted(*args, **kwargs), max_retries=policy.max_retries)
        else:
            value = retry(counted, *args, max_retries=policy.max_retries, **kwargs)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        raise _raised("retry", exc) from exc
    return value


def _outcome(counted: "_Counted", value: Any, start: float) -> RetryOutcome:
    """Check the retry's return value and build the RetryOutcome from it and the recorded attempts."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise _wrong("retry", "(result, error) 二元组", value)
    result, error = value
    if error is not None and not isinstance(error, str):
        raise _wrong("retry", "(result, error)，error 为 None 或字符串", error)
    if inspect.isawaitable(result):
        raise _wrong("retry", "(result, error)，result 是工具的返回值", result)
    attempts = [replace(a, wait_after=max(b.start - a.end, 0.0)) for a, b in zip(counted.attempts, counted.attempts[1:])]
    attempts += counted.attempts[len(attempts):]
    # the tool's last answer was opened when it came; a value the retry made up is opened here
    data, source, opened = counted.last_opened if result is counted.last_value else unwrap_envelope(result)
    info: ErrorInfo | None = None
    if error is not None:
        if counted.last_exception is not None:
            found = classify_error(counted.last_exception)
        else:
            found = opened or ErrorInfo(FATAL, ErrorCode.TOOL_ERROR, error)
        info = ErrorInfo(found.error_type, found.code, error, found.retry_after)
    return RetryOutcome(result, error, attempts=attempts, info=info, elapsed=get_clock().now() - start,
                        data=data, source=source)
