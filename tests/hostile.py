"""Values whose own methods raise, and other values a tool may return that the road must survive.

Each shape is a factory (a fresh value per call) with the plain data it holds, when
the road is expected to show exactly that (None: notes or an error result instead).
`shapes(error)` builds every shape with methods that raise `error`: RuntimeError for
the module-level lists, and the BaseExceptions an `except Exception` lets through
(GeneratorExit, a CancelledError, a BaseException subclass of its own: BASE_ERRORS).
Only KeyboardInterrupt and SystemExit may get out of the road; nothing here raises them.
Shared by tests/test_hardening_core.py, tests/test_hardening_base.py and tests/test_fuzz_hostile.py.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable


class Unusual(BaseException):
    """A BaseException that is neither an Exception nor an interrupt: `except Exception` misses it."""


BASE_ERRORS: list[type[BaseException]] = [GeneratorExit, asyncio.CancelledError, Unusual]


def _boom(name: str, error: type[BaseException] = RuntimeError) -> Callable[..., Any]:
    def method(self, *args, **kwargs):
        raise error(f"{name} raises")
    method.__name__ = name
    return method


def raising(base: type, *names: str, error: type[BaseException] = RuntimeError) -> type:
    """A subclass of `base` whose methods `names` raise `error` (RuntimeError; GeneratorExit or another
    BaseException for the shapes that get past an `except Exception`)."""
    suffix = "" if error is RuntimeError else f"_{error.__name__}"
    return type(f"Raising{base.__name__.title()}_{'_'.join(n.strip('_') for n in names)}{suffix}", (base,),
                {name: _boom(name, error) for name in names})


def _named(stem: str, error: type[BaseException]) -> str:
    return stem if error is RuntimeError else f"{stem}_{error.__name__}"


def unprintable(error: type[BaseException] = RuntimeError) -> type:
    """A class whose str(), repr() and format() all raise `error`."""
    return type(_named("Unprintable", error), (), {n: _boom(n, error) for n in ("__str__", "__repr__", "__format__")})


def unprintable_exception(error: type[BaseException] = RuntimeError) -> type:
    """An Exception class whose __str__ and __repr__ raise `error` (a tool, a hook or a plug-in raises it)."""
    return type(_named("UnprintableError", error), (Exception,),
                {n: _boom(n, error) for n in ("__str__", "__repr__")})


def no_class(error: type[BaseException] = RuntimeError) -> type:
    """A class whose __class__ raises `error`: even isinstance() fails on it."""
    def get(self):
        raise error("__class__ raises")
    return type(_named("NoClass", error), (), {"__class__": property(get)})


def bad_size(error: type[BaseException] = RuntimeError) -> type:
    """A class whose __sizeof__ raises `error`: sys.getsizeof() fails on it."""
    return type(_named("BadSize", error), (), {"__sizeof__": _boom("__sizeof__", error)})


Unprintable = unprintable()
NoClass = no_class()
BadSize = bad_size()


def _cycle_dict() -> dict:
    value: dict = {"name": "环"}
    value["self"] = value
    return value


def _cycle_list() -> list:
    value: list = [1]
    value.append(value)
    return value


Shapes = list[tuple[str, Callable[[], Any], Any]]


def shapes(error: type[BaseException] = RuntimeError) -> tuple[Shapes, Shapes, Shapes]:
    """(PROTOCOL_SHAPES, ODD_SHAPES, HELD_SHAPES) whose raising methods raise `error`."""
    def make(base: type, *names: str) -> type:
        return raising(base, *names, error=error)

    items_dict, iter_dict, len_dict = make(dict, "items"), make(dict, "__iter__", "keys", "values"), make(dict, "__len__")
    get_dict = make(dict, "get", "__getitem__", "__contains__", "keys")
    len_list, iter_list = make(list, "__len__"), make(list, "__iter__", "__getitem__")
    len_iter_tuple, iter_set = make(tuple, "__len__", "__iter__"), make(set, "__iter__", "__len__")
    text_str = make(str, "__len__", "strip", "lstrip", "encode", "__getitem__", "find", "rfind")
    eq_dict = make(dict, "__eq__", "__ne__")
    no_class_, unprintable_, bad_size_ = no_class(error), unprintable(error), bad_size(error)

    def cycle_through_hostile() -> dict:
        inner = items_dict(a=1)
        inner["back"] = {"to": inner}
        return inner

    protocol: Shapes = [
        ("dict.items raises", lambda: items_dict(a=1, b=[1, 2]), {"a": 1, "b": [1, 2]}),
        ("dict.__len__ raises", lambda: len_dict(a=1), {"a": 1}),
        ("envelope whose get/__contains__ raise", lambda: get_dict(status="ok", data={"城市": "上海"}),
         {"城市": "上海"}),
        ("list.__len__ raises", lambda: len_list([1, 2, 3]), [1, 2, 3]),
        ("list.__iter__/__getitem__ raise", lambda: iter_list(["a", "b"]), ["a", "b"]),
        ("tuple.__len__/__iter__ raise", lambda: len_iter_tuple((1, 2)), [1, 2]),
        ("set.__iter__/__len__ raise", lambda: iter_set({7}), [7]),
        ("str subclass whose methods raise", lambda: text_str("报表第一行\n" * 3000), None),
        ("hostile values nested in plain ones",
         lambda: {"rows": [items_dict(x=1), len_list([2])], "n": iter_dict(k="v")},
         {"rows": [{"x": 1}, [2]], "n": {"k": "v"}}),
        ("a cycle through a hostile dict", cycle_through_hostile, None),
        ("a list holding what __class__ raises on", lambda: [1, no_class_()], None),
    ]
    odd: Shapes = [  # values json refuses, and values even isinstance() cannot look at
        ("__class__ raises", no_class_, None),
        ("__str__/__repr__/__format__ raise", unprintable_, None),
        ("an exception whose __str__/__repr__ raise", lambda: unprintable_exception(error)("私有信息"), None),
        ("a cycle in a dict", _cycle_dict, None),
        ("a cycle in a list", _cycle_list, None),
        ("an int of 100,000 digits", lambda: 10 ** 100_000, None),
        ("binary bytes", lambda: bytes(range(256)) * 40, None),
        ("UTF-8 bytes", lambda: "上海晴 25 度。".encode() * 2000, None),
        ("a bytearray", lambda: bytearray(b"abc" * 5000), None),
        ("a memoryview", lambda: memoryview(b"x" * 50_000), None),
        ("NaN and infinities", lambda: {"x": float("nan"), "y": [float("inf"), float("-inf")]}, None),
        ("an object whose __sizeof__ raises", bad_size_, None),
    ]
    held: Shapes = [  # shapes whose raising methods the road never called
        ("dict.__iter__/keys raise", lambda: iter_dict(a=1), {"a": 1}),
        ("dict.__eq__ raises", lambda: eq_dict(a=1), {"a": 1}),
    ]
    return protocol, odd, held


PROTOCOL_SHAPES, ODD_SHAPES, HELD_SHAPES = shapes()
ALL_SHAPES = PROTOCOL_SHAPES + ODD_SHAPES + HELD_SHAPES

# the shapes whose methods raise (the others hold no raising method: cycles, bytes, NaN, a huge int)
_RAISING = {name for name, make, _ in sum(shapes(), [])} - {
    "a cycle in a dict", "a cycle in a list", "an int of 100,000 digits", "binary bytes", "UTF-8 bytes", "a bytearray",
    "a memoryview", "NaN and infinities"}

# every raising shape again, its methods raising each of BASE_ERRORS: (error, name, factory, plain)
BASE_SHAPES: list[tuple[type[BaseException], str, Callable[[], Any], Any]] = [
    (error, name, make, plain) for error in BASE_ERRORS for name, make, plain in sum(shapes(error), [])
    if name in _RAISING]
