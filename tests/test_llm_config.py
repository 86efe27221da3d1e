"""load_settings: environment and .env, the offline default, garbled values, and a key that never shows."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import toolkit
from toolkit.llm import OFFLINE_MODEL, ConfigError, Settings, load_settings, mask_key
from toolkit.llm.config import default_dotenv_path

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-Zq9WmT4xLp0Vb7Kc3Rd8"
REMOTE = "https://dashscope.example.com/compatible-mode/v1"


@pytest.fixture
def no_dotenv(tmp_path: Path) -> Path:
    return tmp_path / "missing.env"


def write_env(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".env"
    path.write_text(text, encoding="utf-8")
    return path


# --- the offline default --------------------------------------------------------------

def test_nothing_configured_gives_the_offline_stand_in(no_dotenv):
    settings = load_settings({}, no_dotenv)
    assert settings.offline is True and settings.model == OFFLINE_MODEL
    assert settings.base_url is None and settings.api_key is None
    assert "离线" in settings.source


def test_model_name_selects_an_offline_variant_when_offline(no_dotenv):
    settings = load_settings({"MODEL_NAME": "offline-stand-in:loop"}, no_dotenv)
    assert settings.offline and settings.model == "offline-stand-in:loop" and settings.variant == "loop"


def test_unknown_offline_variant_is_refused_with_the_list_of_variants(no_dotenv):
    with pytest.raises(ConfigError, match="ignore-results"):
        load_settings({"MODEL_NAME": "offline-stand-in:lazy"}, no_dotenv)


def test_real_model_name_without_a_key_stays_offline_and_says_it_was_ignored(no_dotenv):
    settings = load_settings({"MODEL_NAME": "qwen-plus"}, no_dotenv)
    assert settings.offline and settings.model == OFFLINE_MODEL and "MODEL_NAME" in settings.source


def test_empty_values_count_as_unset(tmp_path):
    path = write_env(tmp_path, "OPENAI_API_KEY=\nMODEL_BASE_URL=\nMODEL_NAME=\n")
    assert load_settings({"DASHSCOPE_API_KEY": "   "}, path).offline


# --- real endpoints --------------------------------------------------------------------

def test_key_base_url_and_model_from_the_environment(no_dotenv):
    settings = load_settings({"DASHSCOPE_API_KEY": KEY, "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "qwen-plus"},
                             no_dotenv)
    assert settings == Settings(REMOTE, "qwen-plus", KEY, False, settings.source)
    assert "DASHSCOPE_API_KEY" in settings.source and "环境变量" in settings.source


def test_dotenv_file_is_read_when_the_environment_is_empty(tmp_path):
    path = write_env(tmp_path, f"OPENAI_API_KEY={KEY}\nMODEL_BASE_URL={REMOTE}\nMODEL_NAME=qwen-max\n")
    settings = load_settings({}, path)
    assert (settings.api_key, settings.base_url, settings.model, settings.offline) == (KEY, REMOTE, "qwen-max", False)
    assert str(path) in settings.source


def test_environment_wins_over_dotenv(tmp_path):
    path = write_env(tmp_path, f"OPENAI_API_KEY={KEY}\nMODEL_BASE_URL={REMOTE}\nMODEL_NAME=from-dotenv\n")
    settings = load_settings({"MODEL_NAME": "from-env"}, path)
    assert settings.model == "from-env" and settings.api_key == KEY
    assert "MODEL_NAME 来自环境变量" in settings.source and "OPENAI_API_KEY 来自 .env" in settings.source


def test_openai_key_without_base_url_uses_the_sdk_default_endpoint(no_dotenv):
    settings = load_settings({"OPENAI_API_KEY": KEY, "MODEL_NAME": "gpt-4o-mini"}, no_dotenv)
    assert settings.base_url is None and not settings.offline


def test_openai_base_url_is_read_when_model_base_url_is_absent(no_dotenv):
    settings = load_settings({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": REMOTE, "MODEL_NAME": "m"}, no_dotenv)
    assert settings.base_url == REMOTE


@pytest.mark.parametrize("url", ["http://localhost:11434/v1", "http://127.0.0.1:8000/v1"])
def test_local_endpoint_needs_no_key(no_dotenv, url):
    settings = load_settings({"MODEL_BASE_URL": url, "MODEL_NAME": "qwen2.5:7b"}, no_dotenv)
    assert settings.api_key == "not-needed" and settings.base_url == url and not settings.offline


def test_default_dotenv_path_is_the_project_root(monkeypatch):
    monkeypatch.delenv("TOOLKIT_DOTENV", raising=False)
    assert default_dotenv_path() == Path(toolkit.__file__).resolve().parent.parent / ".env"
    assert default_dotenv_path().parent == ROOT


@pytest.mark.parametrize("value", ["none", "NONE", ""])
def test_toolkit_dotenv_none_turns_the_dotenv_off(monkeypatch, tmp_path, value):
    monkeypatch.setenv("TOOLKIT_DOTENV", value)
    assert default_dotenv_path() is None
    assert load_settings({}).offline


def test_toolkit_dotenv_points_at_another_file(monkeypatch, tmp_path):
    other = tmp_path / "course.env"
    other.write_text("MODEL_BASE_URL=http://localhost:11434/v1\nMODEL_NAME=qwen2.5:7b\n", encoding="utf-8")
    monkeypatch.setenv("TOOLKIT_DOTENV", str(other))
    assert default_dotenv_path() == other
    settings = load_settings({})
    assert settings.base_url == "http://localhost:11434/v1" and not settings.offline


# --- garbled values ----------------------------------------------------------------------

GARBLED = [
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "ftp://example.com/v1", "MODEL_NAME": "m"}, "http"),
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "example.com/v1", "MODEL_NAME": "m"}, "http"),
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "https://exa mple.com/v1", "MODEL_NAME": "m"}, "空格"),
    ({"OPENAI_API_KEY": KEY + " ", "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "m"}, "空格"),
    ({"OPENAI_API_KEY": KEY[:10] + "\n" + KEY[10:], "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "m"}, "换行"),
    ({"OPENAI_API_KEY": "“" + KEY + "”", "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "m"}, "引号"),
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "qwen plus"}, "MODEL_NAME"),
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": REMOTE}, "MODEL_NAME"),
    ({"MODEL_BASE_URL": REMOTE, "MODEL_NAME": "m"}, "API Key"),
    ({"DASHSCOPE_API_KEY": KEY, "MODEL_NAME": "qwen-plus"}, "MODEL_BASE_URL"),
    ({"OPENAI_API_KEY": "replace-with-your-api-key", "MODEL_NAME": "m"}, "占位"),
    ({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "https://YOUR_WORKSPACE_ID.example.com/v1", "MODEL_NAME": "m"}, "占位"),
]


@pytest.mark.parametrize("environ, hint", GARBLED)
def test_garbled_values_raise_a_one_line_chinese_config_error(no_dotenv, environ, hint):
    with pytest.raises(ConfigError) as caught:
        load_settings(environ, no_dotenv)
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert "\n" not in message and re.search(r"[\u4e00-\u9fff]", message) and hint in message
    assert KEY not in message and KEY[-8:] not in message


def test_a_copied_env_example_is_refused_as_placeholders(tmp_path):
    path = tmp_path / ".env"
    shutil.copy(ROOT / ".env.example", path)
    with pytest.raises(ConfigError, match="占位"):
        load_settings({}, path)


def test_config_error_has_no_chained_exception_that_could_carry_values(no_dotenv):
    with pytest.raises(ConfigError) as caught:
        load_settings({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": "http://[bad", "MODEL_NAME": "m"}, no_dotenv)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


# --- the key never shows -----------------------------------------------------------------

def test_repr_and_str_mask_the_key(no_dotenv):
    settings = load_settings({"OPENAI_API_KEY": KEY, "MODEL_BASE_URL": REMOTE, "MODEL_NAME": "m"}, no_dotenv)
    for text in (repr(settings), str(settings), f"{settings}", repr([settings])):
        assert KEY not in text and KEY[3:-4] not in text
        assert "sk-…" + KEY[-4:] in text
    assert settings.masked_key == "sk-…" + KEY[-4:] and settings.api_key == KEY


@pytest.mark.parametrize("key, shown", [(None, None), ("short-key", "***"), ("not-needed", "not-needed"),
                                        ("sk-abcdefghijklmnop", "sk-…mnop")])
def test_mask_key_hides_all_but_a_short_prefix_and_suffix(key, shown):
    assert mask_key(key) == shown


def test_settings_are_frozen():
    settings = Settings(None, OFFLINE_MODEL, None, True, "test")
    with pytest.raises(AttributeError):
        settings.api_key = KEY  # type: ignore[misc]


def test_dotenv_that_is_not_utf8_is_a_config_error(tmp_path):
    path = tmp_path / ".env"
    path.write_bytes("MODEL_NAME=模型\n".encode("gbk"))
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings({}, path)
