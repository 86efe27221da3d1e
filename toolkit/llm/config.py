"""Model settings from the environment and .env: which endpoint, which model, which key.

`load_settings()` reads MODEL_BASE_URL (or OPENAI_BASE_URL), MODEL_NAME and a key
from OPENAI_API_KEY or DASHSCOPE_API_KEY; the process environment wins over the
project's .env. With no key and no base URL the offline stand-in model answers.
A garbled value is a ConfigError with a one-line Chinese message that names the
variable and never contains the key.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, NamedTuple
from urllib.parse import urlsplit

__all__ = ["Settings", "ConfigError", "load_settings", "default_dotenv_path", "mask_key", "mask_url",
           "OFFLINE_MODEL", "OFFLINE_VARIANTS", "LOCAL_HOSTS"]

OFFLINE_MODEL = "offline-stand-in"
# variant suffix -> what it teaches (shown in the ConfigError for an unknown variant)
OFFLINE_VARIANTS: dict[str, str] = {
    "": "诚实：只根据工具结果回答",
    "ignore-results": "无视工具结果，编造数字",
    "loop": "用同样的参数反复调用同一个工具",
    "unknown-tool": "先请求一个不存在的工具",
    "bad-arguments": "先发不是 JSON 的参数，再发不符合定义的参数",
    "change-arguments": "工具失败后换个参数再调同一个工具，直到被告知别再试",
}
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
KEY_NAMES = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY")
BASE_URL_NAMES = ("MODEL_BASE_URL", "OPENAI_BASE_URL")
NO_KEY_NEEDED = "not-needed"

_PLACEHOLDER = re.compile(r"replace-with-|YOUR_[A-Z_]+|<[^<>]*>", re.IGNORECASE)
_KEY_CHARS = re.compile(r"[\x21-\x7e]+")
_QUOTES = "\"'`“”‘’"


class ConfigError(ValueError):
    """A setting that cannot work; the message is one Chinese line without the key."""


def mask_key(key: str | None) -> str | None:
    """"sk-…abcd" for a long key, "***" for a short one, None for None."""
    if key is None:
        return None
    if key in (NO_KEY_NEEDED, "offline"):
        return key
    if len(key) < 16:
        return "***"
    return f"{key[:3]}…{key[-4:]}"


def mask_url(url: str | None) -> str | None:
    """A base URL safe to show: credentials in its userinfo ("user:pass@") and every query value become ***.

    "https://u:p@host/v1?key=abc" -> "https://***@host/v1?key=***". Never raises.
    """
    if not isinstance(url, str):
        return url
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = "***@" + netloc.rpartition("@")[2]
        query = "&".join(f"{pair.partition('=')[0]}=***" if "=" in pair else pair
                         for pair in parts.query.split("&")) if parts.query else ""
        masked = parts._replace(netloc=netloc, query=query, fragment="").geturl()
    except ValueError:
        return "***"
    from ..redaction import redact

    return redact(masked)


@dataclass(frozen=True)
class Settings:
    """Where the model lives. repr/str show the key masked and the base URL without credentials."""

    base_url: str | None
    model: str
    api_key: str | None = None
    offline: bool = False
    source: str = "代码中直接指定"

    def __repr__(self) -> str:
        return (f"Settings(base_url={mask_url(self.base_url)!r}, model={self.model!r}, "
                f"api_key={mask_key(self.api_key)!r}, offline={self.offline!r}, source={self.source!r})")

    __str__ = __repr__

    @property
    def masked_key(self) -> str | None:
        return mask_key(self.api_key)

    @property
    def variant(self) -> str | None:
        """The offline variant ("" for the honest one), or None for a real endpoint."""
        if not self.offline:
            return None
        return self.model.partition(":")[2]


def default_dotenv_path() -> Path | None:
    """The .env to read: $TOOLKIT_DOTENV if set ("none" or empty: no .env at all),
    else the .env at the project root (the folder that holds the toolkit package)."""
    override = os.environ.get("TOOLKIT_DOTENV")
    if override is not None:
        return None if override.strip().lower() in ("", "none") else Path(override)
    import toolkit

    return Path(toolkit.__file__).resolve().parent.parent / ".env"


def _read_dotenv(path: Path | None) -> dict[str, str]:
    if path is None or not path.is_file():
        return {}
    from dotenv import dotenv_values  # lazy: importing toolkit stays light

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeError):
        raise ConfigError(f".env 文件读取失败（{path}），请确认它是 UTF-8 编码的文本文件") from None
    return {k: v for k, v in values.items() if v is not None}


class _Found(NamedTuple):
    value: str | None
    name: str | None    # which variable held it
    origin: str | None  # "env" or ".env"


def _pick(names: tuple[str, ...], env: Mapping[str, str], dotenv: Mapping[str, str]) -> _Found:
    """The first of `names` set to a non-blank value; the environment wins over .env."""
    for origin, values in (("env", env), (".env", dotenv)):
        for name in names:
            value = values.get(name)
            if value is not None and value.strip():
                return _Found(value, name, origin)
    return _Found(None, None, None)


def _check_text(name: str, value: str, what: str) -> None:
    if any(ch.isspace() for ch in value):
        raise ConfigError(f"{name} 含有空格或换行，请检查{what}是否多复制了字符")
    if _PLACEHOLDER.search(value):
        raise ConfigError(f"{name} 还是 .env.example 里的占位文字，请换成你自己的{what}")


def _check_key(name: str, key: str) -> None:
    _check_text(name, key, " API Key ")
    if any(q in key for q in _QUOTES) or not _KEY_CHARS.fullmatch(key):
        raise ConfigError(f"{name} 含有引号、中文或其他不可见字符，请只粘贴密钥本身")


def _check_base_url(name: str, url: str) -> str:
    """Validate and return the hostname."""
    _check_text(name, url, "接口地址")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        raise ConfigError(f"{name} 不是合法的网址，应形如 https://example.com/v1") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigError(f"{name} 必须以 http:// 或 https:// 开头并包含主机名，例如 https://example.com/v1")
    return host


def _offline_settings(model: str | None, model_origin: str | None) -> Settings:
    if model and model.split(":", 1)[0] == OFFLINE_MODEL:
        variant = model.partition(":")[2]
        if variant not in OFFLINE_VARIANTS:
            known = "、".join(f"{OFFLINE_MODEL}:{v}" if v else OFFLINE_MODEL for v in OFFLINE_VARIANTS)
            raise ConfigError(f"MODEL_NAME 指定了不存在的离线变体，可选：{known}")
        return Settings(None, model, None, True, f"离线替身模型（没有配置 API Key 和接口地址；MODEL_NAME 来自{model_origin}）")
    note = "；MODEL_NAME 已忽略，因为没有配置 API Key" if model else ""
    return Settings(None, OFFLINE_MODEL, None, True, f"离线替身模型（没有配置 API Key 和接口地址{note}）")


def load_settings(environ: Mapping[str, str] | None = None,
                  dotenv_path: str | Path | None = None) -> Settings:
    """Read the model settings; the environment wins over the .env file.

    environ: the variables to read (default os.environ); dotenv_path: the .env
    to read (default the project root's; a missing file counts as empty).
    Returns offline settings when neither a key nor a base URL is set; a
    MODEL_NAME like "offline-stand-in:loop" then picks an offline variant.
    Raises ConfigError for a base URL that is not http(s), a value with spaces
    or newlines or .env.example's placeholder text, a key without MODEL_NAME,
    a base URL without a key (unless its host is localhost/127.0.0.1, e.g.
    Ollama, which gets api_key "not-needed"), or DASHSCOPE_API_KEY without a
    base URL. The message never contains the key.
    """
    env = os.environ if environ is None else environ
    path = Path(dotenv_path) if dotenv_path is not None else default_dotenv_path()
    dotenv = _read_dotenv(path)
    key = _pick(KEY_NAMES, env, dotenv)
    url = _pick(BASE_URL_NAMES, env, dotenv)
    model = _pick(("MODEL_NAME",), env, dotenv)
    origin_text = {"env": "环境变量", ".env": f" .env（{path}）"}
    if key.value is not None:
        _check_key(key.name, key.value)
    host = _check_base_url(url.name, url.value) if url.value is not None else None
    if model.value is not None:
        _check_text("MODEL_NAME", model.value, "模型名称")
    if key.value is None and url.value is None:
        return _offline_settings(model.value, origin_text.get(model.origin or "env"))
    if key.value is None:
        if host not in LOCAL_HOSTS:
            raise ConfigError(f"配置了 {url.name} 却没有 API Key：请在 .env 中填写 OPENAI_API_KEY 或 DASHSCOPE_API_KEY"
                              "（只有 localhost/127.0.0.1 的本地服务可以不填）")
        key = _Found(NO_KEY_NEEDED, None, None)
    return _endpoint_settings(key, url, model, origin_text)


def _endpoint_settings(key: _Found, url: _Found, model: _Found, origin_text: dict[str, str]) -> Settings:
    """Settings for a real endpoint from values already checked."""
    if model.value is None:
        raise ConfigError("已配置 API Key 或接口地址，但缺少 MODEL_NAME：请在 .env 中填写模型名称"
                          "（想用离线模型就把 API Key 和接口地址都删掉）")
    if url.value is None and key.name == "DASHSCOPE_API_KEY":
        raise ConfigError("使用 DASHSCOPE_API_KEY 时还需要 MODEL_BASE_URL（百炼控制台中你所在地域的 compatible-mode 地址）")
    used = [(name, origin) for _, name, origin in (key, url, model) if name]
    source = "；".join(f"{name} 来自{origin_text[origin]}" for name, origin in used)
    return Settings(url.value, model.value, key.value, False, source)
