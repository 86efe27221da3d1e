"""Values whose own methods raise, and other values a tool may return that the road must survive.

Each shape is a factory (a fresh value per call) with the plain data it holds, when
the road is expected to show exactly that (None: notes or an error result instead).
Shared by tests/test_hardening_core.py and tests/test_fuzz_hostile.py.
"""
from __future__ import annotations

from typing import Any, Callable


def _boom(name: str) -> Callable[..., Any]:
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} raises")
    method.__name__ = name
    return method


def raising(base: type, *names: str) -> type:
    """A subclass of `base` whose methods `names` raise RuntimeError."""
    return type(f"Raising{base.__name__.title()}_{'_'.join(n.strip('_') for n in names)}", (base,),
                {name: _boom(name) for name in names})


class Unprintable:
    """str(), repr() and format() all raise."""

    __str__ = _boom("__str__")
    __repr__ = _boom("__repr__")
    __format__ = _boom("__format__")


class NoClass:
    """Even isinstance() fails on it: its __class__ raises."""

    @property
    def __class__(self):  # type: ignore[override]
        raise RuntimeError("__class__ raises")


class BadSize:
    """sys.getsizeof() fails on it."""

    def __sizeof__(self) -> int:
        raise RuntimeError("__sizeof__ raises")


def _cycle_dict() -> dict:
    value: dict = {"name": "环"}
    value["self"] = value
    return value


def _cycle_list() -> list:
    value: list = [1]
    value.append(value)
    return value


def _cycle_through_hostile() -> dict:
    inner = raising(dict, "items")(a=1)
    inner["back"] = {"to": inner}
    return inner


ItemsDict = raising(dict, "items")
IterDict = raising(dict, "__iter__", "keys", "values")
LenDict = raising(dict, "__len__")
GetDict = raising(dict, "get", "__getitem__", "__contains__", "keys")
LenList = raising(list, "__len__")
IterList = raising(list, "__iter__", "__getitem__")
LenIterTuple = raising(tuple, "__len__", "__iter__")
IterSet = raising(set, "__iter__", "__len__")
TextStr = raising(str, "__len__", "strip", "lstrip", "encode", "__getitem__", "find", "rfind")
EqDict = raising(dict, "__eq__", "__ne__")

# (name, factory, the plain data the road should show, or None)
PROTOCOL_SHAPES: list[tuple[str, Callable[[], Any], Any]] = [
    ("dict.items raises", lambda: ItemsDict(a=1, b=[1, 2]), {"a": 1, "b": [1, 2]}),
    ("dict.__len__ raises", lambda: LenDict(a=1), {"a": 1}),
    ("envelope whose get/__contains__ raise", lambda: GetDict(status="ok", data={"城市": "上海"}),
     {"城市": "上海"}),
    ("list.__len__ raises", lambda: LenList([1, 2, 3]), [1, 2, 3]),
    ("list.__iter__/__getitem__ raise", lambda: IterList(["a", "b"]), ["a", "b"]),
    ("tuple.__len__/__iter__ raise", lambda: LenIterTuple((1, 2)), [1, 2]),
    ("set.__iter__/__len__ raise", lambda: IterSet({7}), [7]),
    ("str subclass whose methods raise", lambda: TextStr("报表第一行\n" * 3000), None),
    ("hostile values nested in plain ones", lambda: {"rows": [ItemsDict(x=1), LenList([2])], "n": IterDict(k="v")},
     {"rows": [{"x": 1}, [2]], "n": {"k": "v"}}),
    ("a cycle through a hostile dict", _cycle_through_hostile, None),
    ("a list holding what __class__ raises on", lambda: [1, NoClass()], None),
]

# values json refuses, and values even isinstance() cannot look at
ODD_SHAPES: list[tuple[str, Callable[[], Any], Any]] = [
    ("__class__ raises", NoClass, None),
    ("__str__/__repr__/__format__ raise", Unprintable, None),
    ("a cycle in a dict", _cycle_dict, None),
    ("a cycle in a list", _cycle_list, None),
    ("an int of 100,000 digits", lambda: 10 ** 100_000, None),
    ("binary bytes", lambda: bytes(range(256)) * 40, None),
    ("UTF-8 bytes", lambda: "上海晴 25 度。".encode() * 2000, None),
    ("a bytearray", lambda: bytearray(b"abc" * 5000), None),
    ("a memoryview", lambda: memoryview(b"x" * 50_000), None),
    ("NaN and infinities", lambda: {"x": float("nan"), "y": [float("inf"), float("-inf")]}, None),
    ("an object whose __sizeof__ raises", BadSize, None),
]

# shapes whose raising methods the road never called
HELD_SHAPES: list[tuple[str, Callable[[], Any], Any]] = [
    ("dict.__iter__/keys raise", lambda: IterDict(a=1), {"a": 1}),
    ("dict.__eq__ raises", lambda: EqDict(a=1), {"a": 1}),
]

ALL_SHAPES = PROTOCOL_SHAPES + ODD_SHAPES + HELD_SHAPES
