"""What a tool call leaves behind: ToolResult, the three error kinds, and classify_error.

Errors travel the road as values. A tool may raise any exception; `classify_error`
turns it into an `ErrorInfo` (retryable / fatal, a model-facing message in Chinese,
a Retry-After hint). A tool that got only part of its answer returns `PartialResult`.
"""
from __future__ import annotations

import email.utils
import math
import time
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal

from .redaction import safe_repr, safe_str

ErrorType = Literal["retryable", "fatal", "partial"]
RETRYABLE: ErrorType = "retryable"
FATAL: ErrorType = "fatal"
PARTIAL: ErrorType = "partial"

Status = Literal["success", "partial", "error"]


class ErrorCode(StrEnum):
    """Every error code the toolkit itself gives. A str: `code == "TIMEOUT"` keeps working.

    A tool's own error envelope may carry codes of its own (INVALID_SALES_CSV, ...):
    those stay plain strings, and `as_code` turns a known one into its member.
    """

    # transient: the same call may work later
    TIMEOUT = "TIMEOUT"
    CONNECTION = "CONNECTION"
    RATE_LIMITED = "RATE_LIMITED"
    SERVER_ERROR = "SERVER_ERROR"
    BAD_GATEWAY = "BAD_GATEWAY"
    UNAVAILABLE = "UNAVAILABLE"
    TRANSIENT = "TRANSIENT"
    CIRCUIT_OPEN = "CIRCUIT_OPEN"
    # fatal: the same call fails again
    BAD_REQUEST = "BAD_REQUEST"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    HTTP_ERROR = "HTTP_ERROR"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    INVALID_ARGUMENTS_JSON = "INVALID_ARGUMENTS_JSON"
    BAD_TOOL_SCHEMA = "BAD_TOOL_SCHEMA"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    REPEATED_CALL = "REPEATED_CALL"
    TOOL_FAILURE_LIMIT = "TOOL_FAILURE_LIMIT"
    TOOL_ERROR = "TOOL_ERROR"
    FATAL = "FATAL"
    UNKNOWN = "UNKNOWN"
    PLUGIN_ERROR = "PLUGIN_ERROR"
    APPROVAL_DENIED = "APPROVAL_DENIED"


UNAVAILABLE_CODES = frozenset({ErrorCode.UNAVAILABLE, ErrorCode.BAD_GATEWAY})
"""The service is down (HTTP 503 / 502): after its retries, a call may go to the tool's fallback."""


def as_code(code: str) -> "ErrorCode | str":
    """The ErrorCode member spelled `code`, or `code` itself when it is a tool's own."""
    return ErrorCode._value2member_map_.get(code, code)  # type: ignore[return-value]


__all__ = [
    "ErrorType", "RETRYABLE", "FATAL", "PARTIAL", "Status", "ErrorCode", "UNAVAILABLE_CODES", "as_code", "ToolResult",
    "PartialResult",
    "ToolError", "RetryableToolError", "FatalToolError", "ErrorInfo",
    "classify_error", "error_from_envelope", "unwrap_envelope",
]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call, success or not. Frozen: change a copy with `dataclasses.replace`.

    `data` is what the model will see: the executor budgets and redacts it
    once, when it builds the result, and nothing after it does so again.
    `truncated` says whether that budget left something out (True; notes inside
    `data` say how much, e.g. "…还有 99 项未显示（共 119 项）") or not (False);
    None means nobody has budgeted `data` yet (a ToolResult built by hand:
    format_tool_message budgets and redacts it, once, on its way to the model).
    `artifact` is the full, untruncated output for code beside the model. `status` is the one answer to "did it
    work?": "success", "partial" or "error"; decide on it, not on `error` (a
    partial result has an `error` text too). `error_type` says what kind of
    failure: None on success, else "retryable", "fatal" or "partial";
    `error_code` is an ErrorCode (or a tool's own code). For "partial", `data`
    holds what arrived and `missing` says what did not. `note` is a line for
    the model from the road itself (e.g. that a fallback tool answered).
    `result_id` numbers an executor's results (the handle `ToolExecutor.read_artifact` reads by);
    `artifact_released` says how big a history entry's full output was and why it was let go.
    """

    name: str
    data: Any
    error: str | None = None
    duration_ms: float = 0.0
    error_type: ErrorType | None = None
    attempts: int = 1
    error_code: ErrorCode | str | None = None
    missing: str | None = None
    truncated: bool | None = None
    artifact: Any = None
    call_id: str | None = None
    started_at: float = 0.0
    args_summary: str | None = None
    note: str | None = None
    trace: tuple = field(default=(), repr=False)
    source: Any = None  # where the data came from (a tool envelope's "source"): metadata, not sent to the model
    result_id: int | None = None
    artifact_released: Any = None  # a toolkit.retention.ReleasedArtifact, or None

    @property
    def status(self) -> Status:
        """"success", "partial" or "error": the word the model reads first, and the one truth.

        success: no error and nothing missing; partial: error_type "partial";
        error: anything else (an error text without an error_type counts as error).
        """
        if self.error_type is None and self.error is None:
            return "success"
        return "partial" if self.error_type == PARTIAL else "error"

    @property
    def ok(self) -> bool:
        """status == "success": a complete success (no error, nothing missing)."""
        return self.status == "success"

    @property
    def retries(self) -> int:
        """Attempts beyond the first."""
        return max(self.attempts - 1, 0)

    def __repr__(self) -> str:
        """Every field but `trace`, each bounded and redacted (safe_repr): the full output in `artifact` may be
        megabytes, hold keys, or be a value whose own __repr__ fails (it is named by its type instead)."""
        shown = ", ".join(f"{f.name}={safe_repr(getattr(self, f.name), 300)}" for f in fields(self) if f.repr)
        return f"ToolResult({shown})"


@dataclass(frozen=True)
class PartialResult:
    """Return this from a tool that got part of its answer.

    >>> PartialResult(data={"上海": "晴"}, missing="北京的天气接口超时")
    """

    data: Any
    missing: str


class ToolError(Exception):
    """An exception a tool raises to state its own error kind and code."""

    error_type: ErrorType = FATAL
    error_code: str = ErrorCode.TOOL_ERROR

    def __init__(self, message: str, *, error_code: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        if error_code is not None:
            self.error_code = error_code
        self.retry_after = retry_after


class RetryableToolError(ToolError):
    """A transient failure: the same call may succeed later."""

    error_type = RETRYABLE
    error_code = ErrorCode.TRANSIENT


class FatalToolError(ToolError):
    """A failure that the same call will hit again: do not retry."""

    error_type = FATAL
    error_code = ErrorCode.FATAL


@dataclass(frozen=True)
class ErrorInfo:
    """How one failure is classified: kind, code, model-facing message, wait hint."""

    error_type: ErrorType
    error_code: ErrorCode | str
    message: str
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.error_type == RETRYABLE


# --- classification ----------------------------------------------------------

RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})

STATUS_TEXT = {
    400: (ErrorCode.BAD_REQUEST, "请求参数有误，请修改参数后再调用"),
    401: (ErrorCode.UNAUTHORIZED, "认证失败（密钥无效或缺失），重试无用，请告知用户检查配置"),
    403: (ErrorCode.FORBIDDEN, "没有权限，重试无用，需要用户授权"),
    404: (ErrorCode.NOT_FOUND, "请求的资源不存在，请检查参数"),
    408: (ErrorCode.TIMEOUT, "服务端超时，可以稍后重试"),
    409: (ErrorCode.CONFLICT, "请求与当前状态冲突，请检查后再决定"),
    422: (ErrorCode.BAD_REQUEST, "参数未通过校验，请修改参数"),
    429: (ErrorCode.RATE_LIMITED, "请求过于频繁（限流），请等待后重试"),
    500: (ErrorCode.SERVER_ERROR, "服务内部错误，可以稍后重试"),
    502: (ErrorCode.BAD_GATEWAY, "上游服务暂时不可用，可以稍后重试"),
    503: (ErrorCode.UNAVAILABLE, "服务暂时不可用，可以稍后重试或换用备用工具"),
    504: (ErrorCode.TIMEOUT, "上游服务超时，可以稍后重试"),
}


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _http_status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


def _headers(exc: BaseException) -> Any:
    headers = getattr(exc, "headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def _wait_or_none(seconds: float) -> float | None:
    """A header's wait, never negative; None for NaN or infinity (such a wait would stall a clock)."""
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _seconds(value: Any) -> float | None:
    """A tool's own retry_after as seconds >= 0: a number or numeric text; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return _wait_or_none(float(value))
    except (ValueError, OverflowError):
        return None


_HEADER_CHARS = 64  # longer than any number or HTTP date a Retry-After holds: unreadable, not parsed


def _header_text(get: Any, *names: str) -> str | None:
    """The first of these headers that is present, as stripped text; None when absent or too long to be one."""
    for name in names:
        value = get(name)
        if value is None:
            continue
        text = value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)
        return text.strip() if len(text) <= _HEADER_CHARS else None
    return None


def _number(text: str | None) -> float | None:
    """A header's number: ASCII digits with an optional fraction ("3", "1500", "2.5"); None for anything
    else: a sign ("-5"), an exponent ("1e3"), "_" or full-width digits, NaN, infinity, text. float() alone
    would read all of these."""
    if not text or not text.isascii():
        return None
    whole, point, fraction = text.partition(".")
    if not whole.isdigit() or (point and not fraction.isdigit()):
        return None
    return float(text)


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or HTTP date).

    `retry-after-ms` wins when it is a readable number (ASCII digits, an
    optional fraction); a malformed one ("soon", "NaN", "-5", "1e3", "",
    full-width digits, over 64 characters) is skipped, so a valid
    `Retry-After` beside it still counts. `Retry-After` is read the same way,
    else as an HTTP date (a date in the past is a wait of 0). Returns None
    when both are absent or unreadable; never negative, never infinite.
    """
    if not headers or not callable(getattr(headers, "get", None)):  # no headers, or not a mapping of them
        return None
    ms = _number(_header_text(headers.get, "retry-after-ms", "Retry-After-Ms"))
    wait = _wait_or_none(ms / 1000.0) if ms is not None else None
    if wait is not None:
        return wait
    value = _header_text(headers.get, "retry-after", "Retry-After")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return _wait_or_none(seconds)
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, OverflowError):  # not an HTTP date either
        return None
    return _wait_or_none(when - (time.time() if now is None else now))


def classify_error(exc: BaseException) -> ErrorInfo:
    """Map an exception to retryable or fatal, with a message the model can act on.

    Raises TypeError (in Chinese) for a value that is not an exception.
    Retryable: timeouts, connection failures, HTTP 408/425/429/5xx (with the
    server's Retry-After), and the openai SDK's APITimeoutError,
    APIConnectionError, RateLimitError, InternalServerError.
    Fatal: PermissionError, FileNotFoundError, bad arguments (a ValueError, the
    way a tool refuses a value; a TypeError the call itself raised: arguments
    the tool does not take), HTTP 4xx such as 400/401/403/404, the SDK's
    AuthenticationError, PermissionDeniedError, BadRequestError, and anything
    unknown (logged for a human rather than retried blindly), among them a
    KeyError or TypeError raised inside the tool's own code: the message says
    the tool failed while running, not that the arguments were wrong.
    """
    if not isinstance(exc, BaseException):
        raise TypeError(f"classify_error 需要一个异常对象，收到 {type(exc).__name__}：请传 except 捕获到的异常，"
                        "例如 classify_error(TimeoutError())")
    detail = safe_str(exc, 300)
    name = type(exc).__name__
    where = f"{name}: {detail}" if detail else name

    if isinstance(exc, ToolError):
        kind = RETRYABLE if exc.error_type == RETRYABLE else FATAL
        given = exc.error_code
        code = as_code(safe_str(given, 80)) if isinstance(given, str) and given else ErrorCode.TOOL_ERROR
        return ErrorInfo(kind, code, detail or name, _seconds(getattr(exc, "retry_after", None)))

    status = _http_status(exc)
    if status is not None:
        code, text = STATUS_TEXT.get(
            status, (ErrorCode.HTTP_ERROR, "服务返回错误" if status >= 500 else "请求被拒绝"))
        retryable = status in RETRYABLE_STATUS or status >= 500
        retry_after = parse_retry_after(_headers(exc)) if retryable else None
        return ErrorInfo(RETRYABLE if retryable else FATAL, code,
                         f"{text}（HTTP {status}，{where}）", retry_after)

    names = _class_names(exc)
    if isinstance(exc, TimeoutError) or "APITimeoutError" in names or "TimeoutException" in names:
        return ErrorInfo(RETRYABLE, ErrorCode.TIMEOUT, f"请求超时，可以稍后重试（{where}）")
    if isinstance(exc, ConnectionError) or names & {"APIConnectionError", "ConnectError", "NetworkError",
                                                    "RemoteProtocolError"}:
        return ErrorInfo(RETRYABLE, ErrorCode.CONNECTION, f"网络连接失败，可以稍后重试（{where}）")
    if isinstance(exc, PermissionError):
        return ErrorInfo(FATAL, ErrorCode.PERMISSION_DENIED, f"权限不足，重试无用，需要用户授权（{where}）")
    if isinstance(exc, FileNotFoundError):
        return ErrorInfo(FATAL, ErrorCode.NOT_FOUND, f"找不到文件或资源，请检查参数（{where}）")
    if isinstance(exc, ValueError) or (isinstance(exc, TypeError) and _raised_by_the_call(exc)):
        return ErrorInfo(FATAL, ErrorCode.INVALID_ARGUMENTS, f"参数错误，请修正参数后再调用（{where}）")
    if isinstance(exc, (KeyError, TypeError)):  # a lookup or an operation inside the tool's own code failed
        return ErrorInfo(FATAL, ErrorCode.UNKNOWN, f"工具运行时出错（{where}），重试无用，已记录，需要人工查看")
    return ErrorInfo(FATAL, ErrorCode.UNKNOWN, f"未知错误，已记录，需要人工查看（{where}）")


def _raised_by_the_call(exc: BaseException) -> bool:
    """Whether `exc` was raised where it was caught, by the call itself (arguments the tool does not take), not
    inside the tool's code (its traceback has no frame below the catching one); True for one never raised."""
    tb = exc.__traceback__
    return tb is None or tb.tb_next is None


def error_from_envelope(value: Any) -> ErrorInfo | None:
    """Recognise a tool that reports failure in its return value.

    The course's tools return {"status": "error", "error": {"code", "message"}}.
    Such a value is a fatal error (the tool ran and decided) unless it says
    "retryable": true. {"error": None} is NOT an error (the original course's parser got
    this wrong). Returns None for anything that is not an error envelope.
    """
    if not isinstance(value, dict):
        return None
    error, status = value.get("error"), value.get("status")
    if error in (None, "", {}, []) or status in ("ok", "success"):
        return None
    if isinstance(error, dict):
        code = as_code(safe_str(error.get("code") or ErrorCode.TOOL_ERROR, 80))
        message = safe_str(error.get("message") or error.get("detail") or code, 500)
    else:
        code, message = ErrorCode.TOOL_ERROR, safe_str(error, 500)
    return ErrorInfo(RETRYABLE if value.get("retryable") is True else FATAL, code, message)


# --- one envelope, opened once ----------------------------------------------------

ENVELOPE_KEYS = frozenset({"status", "data", "source", "error", "retryable"})
_ERROR_FIELDS = ("code", "message", "detail")


def is_envelope(value: Any) -> bool:
    """Whether `value` is a tool's own {status, data, source, error} envelope.

    It must be a dict with "status", with "data" or "error", and no key
    outside status / data / source / error / retryable (a dict with more keys
    is the tool's data, whatever its field names).
    """
    return (isinstance(value, dict) and "status" in value and ("data" in value or "error" in value)
            and value.keys() <= ENVELOPE_KEYS)


def unwrap_envelope(value: Any) -> tuple[Any, Any, ErrorInfo | None]:
    """Open a tool's envelope once: (data, source, error or None).

    For an envelope, data is its "data"; for an error envelope without data,
    the error's extra fields (e.g. {"line": 3} or {"known_cities": [...]}) or
    None, and the ErrorInfo from `error_from_envelope`. Anything that is not
    an envelope comes back unchanged as (value, None, None).
    """
    if not is_envelope(value):
        return value, None, None
    info = error_from_envelope(value)
    data, error = value.get("data"), value.get("error")
    if info is not None and data is None and isinstance(error, dict):
        data = {k: v for k, v in error.items() if k not in _ERROR_FIELDS} or None
    return data, value.get("source"), info
