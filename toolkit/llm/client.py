"""The client factory: one openai SDK client for a real endpoint or the offline model.

`make_client()` reads the settings and returns `(client, model)`. Offline, it
starts the process-wide offline server once (a daemon thread on 127.0.0.1) and
points the SDK at it, so the code a student reads is the same in both cases.
The openai package is imported only here, inside the function.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .config import Settings, load_settings
from .server import shared_offline_server

if TYPE_CHECKING:  # pragma: no cover
    import openai

__all__ = ["make_client", "DEFAULT_BASE_URL", "REAL_TIMEOUT_S", "OFFLINE_TIMEOUT_S"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
REAL_TIMEOUT_S = 60.0
OFFLINE_TIMEOUT_S = 30.0
_OFFLINE_CLIENTS: "dict[str, openai.OpenAI]" = {}  # base URL of the shared offline server -> its client


def make_client(settings: Settings | None = None) -> "tuple[openai.OpenAI, str]":
    """The SDK client and the model name to pass as `model=`.

    settings: from load_settings() when None (which raises ConfigError for a
    garbled .env). Offline: OpenAI(base_url=<offline server>/v1,
    api_key="offline", max_retries=0), so the SDK's own retries never hide
    ours. Real endpoint: OpenAI(base_url=..., api_key=..., timeout=60), with
    the base URL passed explicitly so OPENAI_BASE_URL cannot redirect it.
    Raises TypeError when settings is not a Settings.
    """
    from openai import OpenAI  # lazy: `import toolkit` must not import openai

    settings = load_settings() if settings is None else settings
    if not isinstance(settings, Settings):
        raise TypeError(f"make_client 需要 load_settings() 给出的 Settings，收到 {type(settings).__name__}："
                        "请不传参数（自动读取 .env），或传 make_client(load_settings())")
    if settings.offline:
        server = shared_offline_server()
        client = _OFFLINE_CLIENTS.get(server.base_url)
        if client is None:  # one per server, as the SDK advises: each new client loads the CA bundle again (~0.1 s)
            client = OpenAI(base_url=server.base_url, api_key="offline", max_retries=0, timeout=OFFLINE_TIMEOUT_S)
            _OFFLINE_CLIENTS[server.base_url] = client
        return client, settings.model
    client = OpenAI(base_url=settings.base_url or DEFAULT_BASE_URL, api_key=settings.api_key,
                    timeout=REAL_TIMEOUT_S)
    return client, settings.model
