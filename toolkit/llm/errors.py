"""What went wrong with the model endpoint, said once in Chinese: describe_model_error, BadModelReply."""
from __future__ import annotations

from ..redaction import redact, safe_str

__all__ = ["describe_model_error", "BadModelReply"]


class BadModelReply(Exception):
    """The endpoint answered (HTTP 200) with a body that is not a usable chat completion.

    args[0] says what was wrong, in Chinese (no key, at most one line).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(redact(safe_str(reason, 300)).split()))

    @property
    def reason(self) -> str:
        return str(self.args[0])


def describe_model_error(exc: BaseException) -> str:
    """One Chinese line saying what went wrong with the model endpoint and what to check.

    Covers the openai SDK's connection, timeout and HTTP status errors and a
    malformed reply (BadModelReply); the text is redacted (no key ever
    appears) and never raises.
    """
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return " ".join(redact(f"调用模型失败：{safe_str(exc, 200)}").split())

    where = _endpoint(exc)
    if isinstance(exc, BadModelReply):
        text = f"模型接口返回了无法使用的回复（{exc.reason}）：请检查 MODEL_BASE_URL 指向的是兼容 OpenAI 的接口。"
    elif isinstance(exc, openai.APITimeoutError):
        text = f"连接模型接口超时{where}：请检查网络，或稍后再试。"
    elif isinstance(exc, openai.APIConnectionError):
        text = f"连不上模型接口{where}：请检查网络和 .env 中的 MODEL_BASE_URL。"
    elif isinstance(exc, openai.AuthenticationError):
        text = "模型接口认证失败（HTTP 401）：API Key 无效或缺失，请检查 .env 中的 OPENAI_API_KEY / DASHSCOPE_API_KEY。"
    elif isinstance(exc, openai.PermissionDeniedError):
        text = "模型接口拒绝访问（HTTP 403）：这个 Key 没有使用该模型或地域的权限，请在控制台检查。"
    elif isinstance(exc, openai.NotFoundError):
        text = "模型接口返回 404：请检查 MODEL_BASE_URL 和 MODEL_NAME 是否正确、是否属于同一地域。"
    elif isinstance(exc, openai.RateLimitError):
        text = "模型接口限流（HTTP 429）：请求太频繁或额度已用完，已自动重试仍失败，请稍后再试。"
    elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        text = f"模型服务内部错误（HTTP {exc.status_code}），已自动重试仍失败，请稍后再试。"
    elif isinstance(exc, openai.APIStatusError):
        text = f"模型接口拒绝了请求（HTTP {exc.status_code}）：{safe_str(exc.message, 200)}"
    else:
        text = f"调用模型失败：{safe_str(exc, 200)}"
    return " ".join(redact(text).split())


def _endpoint(exc: BaseException) -> str:
    try:
        url = exc.request.url  # type: ignore[attr-defined]
        return f"（{url.scheme}://{url.host}{':' + str(url.port) if url.port else ''}）"
    except Exception:
        return ""
