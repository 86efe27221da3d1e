"""Secrets never leave: redact (key-shaped text masked) and safe_str (any object as short, redacted text).

Every message, error, log line and transcript the toolkit writes passes through
these two. Both run in time linear in their text (tests/test_linear_time.py),
and safe_str's cost is bounded by its limit, not by the size of the text.
"""
from __future__ import annotations

import re
import reprlib
from typing import Any

__all__ = ["redact", "safe_str", "safe_repr", "SECRET_FIELD", "REDACT_MARGIN"]

# Each pattern masks the secret itself and keeps what names it ("api_key=***"), so a reader
# still sees what was there. The shapes: provider key prefixes, auth schemes (Bearer,
# Basic, Token) with any token characters (/, +, ., = included), name = value pairs with
# an ASCII or a full-width colon, credentials in a URL's userinfo or query string.
# Linear time on any text: an open-ended run that may fail at its end (a JWT's first part
# without its dot, a URL scheme without "://") never contains another place the pattern
# starts (a scheme starts only after a character a scheme cannot hold; a JWT's first part
# stops before "-eyJ"), so no stretch of text is scanned more than a few times
# (tests/test_linear_time.py feeds every pattern runs of 10^4..10^6 characters).
_TOKEN = r"[A-Za-z0-9_\-\.=+/~]"
_SECRET_NAMES = (r"(?:api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?(?:access[_-]?)?key|client[_-]?secret|"
                 r"(?:access|refresh|auth|id|session)[_-]?token|token|secret|passw(?:or)?d|pwd|authorization|"
                 r"credentials?|private[_-]?key|cookie|x-api-key|密码|密钥|口令|令牌)")
_SCHEMES = r"(?:bearer|basic|token|digest)"
_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # provider-shaped keys, wherever they stand
    (re.compile(r"sk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
    (re.compile(r"\b(?:AIza[0-9A-Za-z_\-]{20,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|"
                r"xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_\-]{16,}|hf_[A-Za-z0-9]{20,}|"
                r"eyJ(?:[A-Za-z0-9_]|-(?!eyJ)){8,}+\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,})"), "***"),
    # name = value (JSON, env, headers, query strings); the value may start with an auth scheme
    # (the value is never a scheme word itself: in "Bearer Bearer <key>" the key is the secret)
    (re.compile(rf"(?i)((?<![A-Za-z]){_SECRET_NAMES}\\?[\"']?\s*[:=：]\s*\\?[\"']?)"
                rf"(?:{_SCHEMES}\s+)?(?!{_SCHEMES}\b)[^\s\"'\\,;}}&]{{4,}}"), r"\1***"),
    # an auth scheme and its token
    (re.compile(rf"(?i)\b((?:bearer|basic|digest)\s+)(?!{_SCHEMES}\b){_TOKEN}{{6,}}"), r"\1***"),
    # credentials in a URL: user:password@host, and ?key=... / &sig=... in the query
    (re.compile(r"(?i)((?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://[^\s/@:\"'\\]+:)[^\s/@\"'\\]+(@)"), r"\1***\2"),
    (re.compile(r"(?i)([?&](?:[\w.\-]*(?:key|sig|signature|token|secret|password|credential)|code|auth)=)"
                r"[^&\s#\"'\\]{4,}"), r"\1***"),
]


# every pattern above needs one of these (a separator, a Chinese label or a key prefix without one): text
# without any of them has nothing to hide. One character class, no case folding: the fast path stays fast.
_SECRET_HINT = re.compile(r"[-_:=：@?&.]|密码|密钥|口令|令牌|(?i:aiza|akia|bearer|basic|digest)")

# a field whose NAME says its value is a secret: the whole value is masked, whatever it looks like
SECRET_FIELD = re.compile(rf"(?i)^(?:.*[_\-\s])?{_SECRET_NAMES}$|^(?:auth|pass|passphrase|pin|otp|signature)$")


def redact(text: str) -> str:
    """Replace anything that looks like an API key, token or password with ***.

    Covers provider key shapes (sk-…, AIza…, ghp_…, AKIA…, JWTs), auth schemes
    (Bearer / Basic / Token …), `name: value` pairs for secret-sounding names
    with an ASCII or full-width colon or `=`, and credentials in URLs (userinfo,
    query parameters). Pattern-based: it catches the common shapes, not every
    possible one. Never raises for a str.
    """
    if not _SECRET_HINT.search(text):
        return text
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


REDACT_MARGIN = 4096  # characters past the shown part that safe_str still redacts: a secret's "@host" or JWT dots


def _window(text: str, limit: int) -> str:
    """The part of `text` safe_str redacts: `limit` + REDACT_MARGIN characters, ending between two tokens.

    A secret cannot span whitespace except between its label and its value
    ("password: x"), so a window that ends at whitespace never cuts a secret
    in two: what the window shows is redacted exactly as the whole text would be,
    as long as a secret's identifying part (a URL's "@", a JWT's dots) lies
    within REDACT_MARGIN characters after the shown part.
    """
    end = limit + REDACT_MARGIN
    if len(text) <= end:
        return text
    space = max(text.rfind(c, limit, end) for c in " \t\n\r\u3000")
    return text[: space if space > limit else end]


def safe_str(obj: Any, limit: int = 500) -> str:
    """str(obj), redacted and at most `limit` characters ("…" marks a cut); never raises for an Exception.

    Only the first `limit` + REDACT_MARGIN characters are redacted and kept,
    so the cost is bounded by `limit`, not by the size of the text. A `limit`
    below 1 counts as 1. An object whose __str__ raises an Exception (a tool's
    exception describing a closed resource, say) is named by its type.
    """
    limit = max(limit, 1)
    try:
        text = str(obj)
    except Exception:
        text = f"<{type(obj).__name__} 对象，无法转为文字>"
    window = _window(text, limit)
    shown = redact(window.encode("utf-8", "replace").decode("utf-8"))
    if len(shown) <= limit and len(window) == len(text):
        return shown
    return shown[: limit - 1] + "…"


class _SafeRepr(reprlib.Repr):
    """reprlib's bounded repr, where text is cut after its head (never head + tail: a key's tail would show) and
    redacted first."""

    def repr_str(self, x: str, level: int) -> str:
        return repr(safe_str(x, self.maxstring))

    def repr_int(self, x: int, level: int) -> str:
        bits = x.bit_length()  # repr() refuses an int over 4,300 digits, and is slow long before that
        return repr(x) if bits <= 3000 else f"<约 {int(bits * 0.30103) + 1} 位的整数>"

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception:  # as reprlib's own: an object whose repr fails is named by its type
            text = f"<{type(x).__name__} 对象>"
        return safe_str(text, self.maxother)


_REPR = _SafeRepr()
_REPR.maxstring = _REPR.maxother = 160
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 8
_REPR.maxlevel = 3


def safe_repr(obj: Any, limit: int = 300) -> str:
    """repr(obj) for a repr of our own (ToolResult's): bounded (reprlib's limits, then `limit` characters) and
    redacted. A megabyte string costs its first characters, not its length."""
    return safe_str(_REPR.repr(obj), limit)
