"""The model side: settings from .env, the offline stand-in model and its server, the client factory.

`client, model = make_client()` gives an openai SDK client for the configured
endpoint, or for the offline model when no key is set. Importing this package
loads only the standard library (and python-dotenv when settings are read);
openai is imported inside make_client.
"""
from .client import make_client
from .config import OFFLINE_MODEL, OFFLINE_VARIANTS, ConfigError, Settings, load_settings, mask_key
from .offline import BadRequest, OfflineAPIError, chat_completion, offline_model_names, respond, tool_call
from .server import OfflineServer, shared_offline_server, start_offline_server

__all__ = [
    "BadRequest", "ConfigError", "OFFLINE_MODEL", "OFFLINE_VARIANTS", "OfflineAPIError", "OfflineServer",
    "Settings", "chat_completion", "load_settings", "make_client", "mask_key", "offline_model_names",
    "respond", "shared_offline_server", "start_offline_server", "tool_call",
]
