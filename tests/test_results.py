"""Tests for toolkit.results: ToolResult, classify_error (stdlib, HTTP and openai SDK errors), envelopes."""
from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import time

import httpx2
import openai
import pytest

from toolkit import (FatalToolError, HTTPStatusError, PartialResult, RetryableToolError, RetryPolicy, ToolResult,
                     classify_error, error_from_envelope)
from toolkit.redaction import redact, safe_str
from toolkit.results import ErrorInfo, parse_retry_after

REQUEST = httpx2.Request("POST", "https://api.example.test/v1/chat/completions")


def _response(status: int, headers: dict | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers or {}, request=REQUEST)


def _sdk_status_error(cls: type, status: int, headers: dict | None = None) -> Exception:
    return cls(f"status {status}", response=_response(status, headers), body=None)


# --- ToolResult -------------------------------------------------------------------

def test_tool_result_defaults_match_the_original_shape():
    result = ToolResult("search", "晴，25°C")
    assert (result.name, result.data, result.error, result.duration_ms) == ("search", "晴，25°C", None, 0.0)
    assert result.error_type is None
    assert result.attempts == 1
    assert result.ok is True
    assert result.status == "success"
    assert result.retries == 0


def test_tool_result_positional_arguments_follow_the_seed_order():
    result = ToolResult("search", None, "超时", 512.3)
    assert result.error == "超时"
    assert result.duration_ms == 512.3
    assert result.ok is False
    assert result.status == "error"


def test_partial_tool_result_is_not_ok_and_says_partial():
    result = ToolResult("weather", {"上海": "晴"}, "北京缺失", error_type="partial", missing="北京")
    assert result.ok is False
    assert result.status == "partial"


def test_error_type_alone_makes_a_result_not_ok():
    assert ToolResult("t", 1, error_type="fatal").ok is False


def test_retries_counts_attempts_beyond_the_first():
    assert ToolResult("t", 1, attempts=4).retries == 3
    assert ToolResult("t", None, "x", attempts=0).retries == 0


def test_partial_result_holds_data_and_what_is_missing():
    partial = PartialResult(data={"上海": "晴"}, missing="北京的天气接口超时")
    assert partial.data == {"上海": "晴"}
    assert partial.missing == "北京的天气接口超时"
    with pytest.raises(dataclasses.FrozenInstanceError):
        partial.data = {}  # frozen


# --- classify_error: standard library exceptions ------------------------------------

@pytest.mark.parametrize("exc, code", [
    (TimeoutError("slow"), "TIMEOUT"),
    (ConnectionError("reset"), "CONNECTION"),
    (ConnectionResetError("reset by peer"), "CONNECTION"),
    (ConnectionRefusedError("refused"), "CONNECTION"),
])
def test_transient_stdlib_errors_are_retryable(exc, code):
    info = classify_error(exc)
    assert info.error_type == "retryable"
    assert info.retryable is True
    assert info.error_code == code
    assert info.retry_after is None


@pytest.mark.parametrize("exc, code", [
    (PermissionError("no access"), "PERMISSION_DENIED"),
    (FileNotFoundError("sales.csv"), "NOT_FOUND"),
    (ValueError("bad date"), "INVALID_ARGUMENTS"),
    (TypeError("missing arg"), "INVALID_ARGUMENTS"),
    (KeyError("city"), "UNKNOWN"),
    (RuntimeError("who knows"), "UNKNOWN"),
])
def test_deterministic_stdlib_errors_are_fatal(exc, code):
    info = classify_error(exc)
    assert info.error_type == "fatal"
    assert info.retryable is False
    assert info.error_code == code


def test_a_key_error_inside_a_buggy_tool_is_not_called_an_argument_error():
    """The tool's own lookup failed: the model is told the tool failed while running, not to fix its arguments
    (which were fine). A TypeError is an argument error only when the call itself raised it."""
    from toolkit.retry import retry_call

    def buggy(city: str) -> dict:
        prices = {"上海": 1}
        return {"city": city, "price": prices["price"]}  # a bug: the wrong key

    outcome = asyncio.run(retry_call(RetryPolicy(max_retries=0), buggy, ("上海",)))
    assert outcome.info.error_code == "UNKNOWN" and "参数错误" not in outcome.error
    assert "工具运行时出错" in outcome.error and "KeyError" in outcome.error
    inside = asyncio.run(retry_call(RetryPolicy(max_retries=0), lambda city: city + 1, ("上海",)))
    assert inside.info.error_code == "UNKNOWN" and "参数错误" not in inside.error
    wrong = asyncio.run(retry_call(RetryPolicy(max_retries=0), buggy, (), {"town": "上海"}))
    assert wrong.info.error_code == "INVALID_ARGUMENTS" and "参数错误" in wrong.error


def test_permission_error_message_tells_the_model_not_to_retry():
    message = classify_error(PermissionError("no access")).message
    assert "权限" in message and "重试无用" in message


def test_classify_error_message_names_the_exception_and_its_text():
    message = classify_error(ValueError("日期格式不对")).message
    assert "ValueError" in message and "日期格式不对" in message


def test_classify_error_redacts_secrets_in_the_message():
    info = classify_error(RuntimeError("call failed with key sk-" + "abcdefghijklmnopqrstuvwxyz"))
    assert "abcdefghijklmnop" not in info.message
    assert "sk-***" in info.message


def test_classify_error_survives_an_exception_whose_str_raises():
    class Nasty(Exception):
        def __str__(self):
            raise RuntimeError("no str for you")

    info = classify_error(Nasty())
    assert info.error_type == "fatal"
    assert "Nasty" in info.message


def test_tool_errors_state_their_own_kind_code_and_wait():
    retry = classify_error(RetryableToolError("上游忙", error_code="BUSY", retry_after=3))
    assert (retry.error_type, retry.error_code, retry.retry_after) == ("retryable", "BUSY", 3)
    fatal = classify_error(FatalToolError("文件格式错误", error_code="INVALID_SALES_CSV"))
    assert (fatal.error_type, fatal.error_code) == ("fatal", "INVALID_SALES_CSV")
    assert fatal.message == "文件格式错误"


# --- classify_error: HTTP status errors ------------------------------------------------

@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 503, 504, 599])
def test_transient_http_statuses_are_retryable(status):
    info = classify_error(HTTPStatusError(status))
    assert info.error_type == "retryable"
    assert f"HTTP {status}" in info.message


@pytest.mark.parametrize("status, code", [(400, "BAD_REQUEST"), (401, "UNAUTHORIZED"), (403, "FORBIDDEN"),
                                          (404, "NOT_FOUND"), (409, "CONFLICT"), (422, "BAD_REQUEST"),
                                          (418, "HTTP_ERROR")])
def test_client_http_statuses_are_fatal(status, code):
    info = classify_error(HTTPStatusError(status))
    assert info.error_type == "fatal"
    assert info.error_code == code
    assert info.retry_after is None


def test_status_on_a_response_attribute_is_found():
    class ClientError(Exception):
        def __init__(self):
            super().__init__("boom")
            self.response = _response(503, {"Retry-After": "4"})

    info = classify_error(ClientError())
    assert info.error_code == "UNAVAILABLE"
    assert info.retry_after == 4.0


def test_a_fatal_status_ignores_retry_after():
    info = classify_error(HTTPStatusError(400, headers={"retry-after": "9"}))
    assert info.retry_after is None


# --- classify_error: the openai SDK's exceptions, built on httpx2 ---------------------------

@pytest.mark.parametrize("cls, status, code", [
    (openai.RateLimitError, 429, "RATE_LIMITED"),
    (openai.InternalServerError, 500, "SERVER_ERROR"),
    (openai.InternalServerError, 503, "UNAVAILABLE"),
])
def test_openai_transient_status_errors_are_retryable(cls, status, code):
    info = classify_error(_sdk_status_error(cls, status))
    assert info.error_type == "retryable"
    assert info.error_code == code


@pytest.mark.parametrize("cls, status, code", [
    (openai.AuthenticationError, 401, "UNAUTHORIZED"),
    (openai.PermissionDeniedError, 403, "FORBIDDEN"),
    (openai.BadRequestError, 400, "BAD_REQUEST"),
])
def test_openai_client_errors_are_fatal(cls, status, code):
    info = classify_error(_sdk_status_error(cls, status))
    assert info.error_type == "fatal"
    assert info.error_code == code
    assert info.retry_after is None


def test_openai_timeout_and_connection_errors_are_retryable():
    timeout = classify_error(openai.APITimeoutError(request=REQUEST))
    assert (timeout.error_type, timeout.error_code) == ("retryable", "TIMEOUT")
    connection = classify_error(openai.APIConnectionError(request=REQUEST))
    assert (connection.error_type, connection.error_code) == ("retryable", "CONNECTION")


def test_openai_rate_limit_reads_retry_after_seconds():
    exc = _sdk_status_error(openai.RateLimitError, 429, {"retry-after": "7"})
    assert classify_error(exc).retry_after == 7.0


def test_openai_rate_limit_prefers_retry_after_ms():
    exc = _sdk_status_error(openai.RateLimitError, 429, {"retry-after-ms": "1500", "retry-after": "7"})
    assert classify_error(exc).retry_after == 1.5


def test_openai_authentication_error_message_has_no_key():
    exc = _sdk_status_error(openai.AuthenticationError, 401)
    exc.args = ("Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuv",)
    info = classify_error(exc)
    assert "abcdefghijklmnop" not in info.message


# --- Retry-After parsing -------------------------------------------------------------------

def test_retry_after_accepts_an_http_date():
    now = time.time()
    header = email.utils.formatdate(now + 30, usegmt=True)
    wait = parse_retry_after({"Retry-After": header}, now=now)
    assert 28 <= wait <= 31


@pytest.mark.parametrize("headers", [None, {}, {"retry-after": "soon"}, {"retry-after": "nan"},
                                     {"retry-after-ms": "NaN"}, "not headers"])
def test_unreadable_retry_after_is_none(headers):
    assert parse_retry_after(headers) is None


def test_retry_after_is_never_negative():
    """A negative wait is malformed: no wait at all (the retry's own backoff applies), never a negative one."""
    assert parse_retry_after({"retry-after": "-5"}) is None
    assert parse_retry_after({"retry-after-ms": "-5"}) is None


# --- error envelopes -------------------------------------------------------------------------

def test_error_none_is_not_an_error_seed_000_bug():
    assert error_from_envelope({"status": "ok", "error": None}) is None
    assert error_from_envelope({"error": None, "data": [1]}) is None


def test_status_ok_wins_over_an_error_field():
    assert error_from_envelope({"status": "success", "error": "ignored warning"}) is None


def test_seed_003_error_envelope_is_a_fatal_error_with_its_code():
    info = error_from_envelope({"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到文件"}})
    assert info == ErrorInfo("fatal", "FILE_NOT_FOUND", "找不到文件")


def test_envelope_marked_retryable_is_retryable():
    info = error_from_envelope({"status": "error", "error": "上游忙", "retryable": True})
    assert info.error_type == "retryable"
    assert info.message == "上游忙"


@pytest.mark.parametrize("value", ["error", ["error"], 0, None, {"data": 1}])
def test_non_envelopes_are_not_errors(value):
    assert error_from_envelope(value) is None


# --- safe_str and redact ------------------------------------------------------------------------

def test_safe_str_limits_length_and_never_raises():
    class Bad:
        def __str__(self):
            raise ValueError("nope")

    assert len(safe_str("x" * 1000, 50)) == 50
    assert "Bad" in safe_str(Bad())
    assert safe_str(10 ** 5000)  # str() of a huge int raises; safe_str does not
    assert safe_str("\ud800").encode("utf-8")


@pytest.mark.parametrize("text, secret", [
    ("key=sk-" + "abcdefghijklmnop1234", "abcdefghijklmnop1234"),  # split: no key-shaped literal in the repo
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
    ('{"api_key": "s3cr3tvalue123"}', "s3cr3tvalue123"),
    ("password=hunter2hunter2", "hunter2hunter2"),
])
def test_redact_hides_secrets(text, secret):
    assert secret not in redact(text)
    assert "***" in redact(text)


# --- raw httpx2 errors (what the SDK is built on, and what tools may use directly) -------------------------

def test_httpx2_transport_errors_are_retryable():
    assert classify_error(httpx2.ConnectError("refused", request=REQUEST)).error_code == "CONNECTION"
    assert classify_error(httpx2.ReadTimeout("slow", request=REQUEST)).error_code == "TIMEOUT"
    assert classify_error(httpx2.ConnectTimeout("slow", request=REQUEST)).retryable


def test_httpx2_status_error_reads_status_and_retry_after_from_its_response():
    exc = httpx2.HTTPStatusError("503", request=REQUEST, response=_response(503, {"retry-after": "3"}))
    info = classify_error(exc)
    assert (info.error_type, info.error_code, info.retry_after) == ("retryable", "UNAVAILABLE", 3.0)
    not_found = httpx2.HTTPStatusError("404", request=REQUEST, response=_response(404))
    assert classify_error(not_found).error_type == "fatal"


def test_a_server_that_hangs_up_mid_response_is_retryable():
    import httpx2

    exc = httpx2.RemoteProtocolError("Server disconnected without sending a response.")
    info = classify_error(exc)
    assert info.error_type == "retryable" and info.error_code == "CONNECTION"
