"""Values that cross from the worker (the student's process) to the referee: plain data only.

The worker encodes what the student's code returned into JSON; the referee decodes it back. Nothing the student
made crosses as a live object, so no `__eq__`, `__str__` or `__hash__` of theirs ever runs where a verdict is
taken.

    None, bool, int, float, str      exactly these types cross as themselves
    list, tuple, dict                cross by content (a namedtuple is a tuple, an OrderedDict a dict)
    anything else                    crosses as a Foreign: its type's name, its str() and repr() as
                                     text and its truth value, computed in the worker. A subclass of
                                     str / int / float is a Foreign too ("str 的子类不是 str"); it
                                     equals nothing but itself, so an always-equal value compares as
                                     what it is.

Encoding (JSON): scalars and lists as themselves; every other container is an object with one key: {"t": [...]} a
tuple, {"d": [[key, value], ...]} a dict, {"o": {...}} a Foreign ({"r": [...]} a handle, in a scenario run).
`decode` refuses anything else (Malformed): the referee reads what encode() writes and nothing more.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

__all__ = ["Foreign", "Malformed", "encode", "decode", "describe", "exception_data"]

MAX_DEPTH = 40
MAX_NODES = 200_000
TEXT = 300  # characters of a Foreign's str() and repr() kept
FOREIGN = {"type", "kind", "text", "shown", "truthy"}


class Foreign:
    """A value that is not plain data, as the referee sees it: never equal to anything else."""

    __slots__ = ("type_name", "kind", "text", "shown", "truthy")

    def __init__(self, type_name: str, kind: str, text: str, shown: str, truthy: bool) -> None:
        self.type_name, self.kind, self.text, self.shown, self.truthy = type_name, kind, text, shown, truthy

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return self.truthy

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<{self.type_name}{'：' + self.kind if self.kind else ''} {self.shown}>"


def _safe(fn: Any, value: Any, default: str) -> Any:
    try:
        return fn(value)
    except Exception:  # the student's __str__ / __repr__ / __bool__ may raise
        return default


def _kind(value: Any) -> str:
    if inspect.iscoroutine(value):
        return "协程对象（coroutine）：是不是忘了 await，或者把函数写成了 async def？"
    if inspect.isgenerator(value) or inspect.isasyncgen(value):
        return "生成器：是不是用了 yield，而不是 return？"
    if isinstance(value, BaseException):
        return "异常对象（不是字符串）"
    for base, name in ((str, "str"), (bool, "bool"), (int, "int"), (float, "float")):
        if isinstance(value, base):
            return f"{name} 的子类，不是 {name}"
    if isinstance(value, (set, frozenset)):
        return "集合（set），不是 list"
    return ""


def foreign_fields(value: Any) -> dict:
    """What a Foreign of `value` shows (computed where the value lives: its __str__ is the student's)."""
    return _foreign(value)["o"]


def _foreign(value: Any) -> dict:
    if inspect.iscoroutine(value):
        value.close()  # never awaited: close it so no RuntimeWarning is printed
    kind = type(value)
    text = str(_safe(str, value, "<str() 出错>"))[:TEXT]
    shown = str(_safe(repr, value, "<repr() 出错>"))[:TEXT]
    return {"o": {"type": f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins."),
                  "kind": _kind(value), "text": text, "shown": shown,
                  "truthy": bool(_safe(bool, value, True))}}


def encode(value: Any, keep: Callable[[Any], dict] | None = None) -> Any:
    """The JSON-able form of `value` (worker side). Never raises for the student's objects.

    `keep`, in a scenario run (see _remote.py), turns a value that is not plain data into a node of its
    own (a handle the referee can ask about) instead of a Foreign."""
    count = [0]

    def go(v: Any, depth: int) -> Any:
        count[0] += 1
        if depth > MAX_DEPTH or count[0] > MAX_NODES:
            return {"o": {"type": type(v).__name__, "kind": "嵌套太深或太大（有循环引用吗？）", "text": "", "shown": "…",
                          "truthy": True}}
        t = type(v)
        if v is None or t in (bool, int, float, str):
            return v
        if isinstance(v, list):
            return [go(x, depth + 1) for x in list.__iter__(v)]
        if isinstance(v, tuple):
            return {"t": [go(x, depth + 1) for x in tuple.__iter__(v)]}
        if isinstance(v, dict):
            return {"d": [[go(k, depth + 1), go(x, depth + 1)] for k, x in dict.items(v)]}
        return keep(v) if keep is not None else _foreign(v)

    return go(value, 0)


class Malformed(ValueError):
    """Data from the worker that is not what encode() writes (a worker tampered with): never guessed at."""


def decode(data: Any, other: Callable[[Any], Any] | None = None, depth: int = 0) -> Any:
    """The referee's value for encoded `data`: plain types and Foreign only (and what `other` makes of a handle
    node {"r": ...} that `encode`'s `keep` wrote, in a scenario run). Malformed for anything else."""
    t = type(data)
    if data is None or t in (bool, int, float, str):
        return data
    if depth > 2 * MAX_DEPTH:
        raise Malformed("嵌套太深")
    if t is list:
        return [decode(x, other, depth + 1) for x in data]
    [(key, body)] = data.items() if t is dict and len(data) == 1 else [(None, None)]
    if key == "t" and type(body) is list:
        return tuple(decode(x, other, depth + 1) for x in body)
    if key == "d" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        try:
            return {decode(k, other, depth + 1): decode(v, other, depth + 1) for k, v in body}
        except TypeError:  # a list as a key: encode() never writes one
            raise Malformed("字典的键不对") from None
    if key == "o" and type(body) is dict and set(body) == FOREIGN and type(body["truthy"]) is bool and \
            all(type(body[f]) is str for f in FOREIGN - {"truthy"}):
        return Foreign(body["type"], body["kind"], body["text"], body["shown"], body["truthy"])
    if key == "r" and other is not None:
        return other(body)
    raise Malformed(f"不认识的值 {str(data)[:60]}")


def describe(value: Any, limit: int = 80) -> str:
    """A short Chinese description of a value the student's function gave, for failure messages."""
    if value is None:
        return "None（是不是忘了 return？）"
    if isinstance(value, Foreign):
        return repr(value)[:limit + 60]
    shown = repr(value)
    return f"{type(value).__name__} {shown[:limit]}{'…' if len(shown) > limit else ''}"


def exception_data(exc: BaseException) -> dict:
    """An exception raised in the worker, as plain data: its class names (most derived first) and message."""
    names = [k.__name__ for k in type(exc).__mro__ if k not in (object, BaseException)]
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    except Exception:
        message = "<str() 出错>"
    found = {"names": names or ["BaseException"], "message": str(message)[:500]}
    if isinstance(exc, SyntaxError):
        found.update(line=exc.lineno, text=(exc.text or "").strip()[:120])
    return found
