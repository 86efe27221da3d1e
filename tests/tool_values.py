"""Values a tool or a plug-in may hand the road, and what they hold: the road must survive every one.

ODD_SHAPES: values json refuses or that are costly to read (cycles, a 100,000-digit int,
bytes, NaN): the road shows them within the budget. FAILING_SHAPES: values whose reading
fails the way real ones do, a lazily loaded record or result set whose store closed
raising from items(), keys(), __iter__ or __len__: where a tool's value enters the road
(the executor) that is an error result. BASE_ERRORS: what a tool, a hook or a plug-in may
raise beyond Exception (GeneratorExit, a CancelledError of its own, a BaseException of
its own): its own failure, never an exception out of the road.
Objects crafted against the toolkit itself (a __class__ that raises, an __eq__ that lies)
are out of scope outside the grader (ARCHITECTURE.md, "Boundaries").
Shared by tests/test_hardening_core.py, tests/test_hardening_base.py, tests/test_fuzz.py and
tests/test_fuzz_hostile.py.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable


class Unusual(BaseException):
    """A BaseException that is neither an Exception nor an interrupt: `except Exception` misses it."""


BASE_ERRORS: list[type[BaseException]] = [GeneratorExit, asyncio.CancelledError, Unusual]


class StoreClosed(RuntimeError):
    """What a lazily loaded record raises once the store (a database cursor, a file) behind it has closed."""


def _closed(self, *args, **kwargs):
    raise StoreClosed("存储已关闭，记录无法再读取")


LazyRecord = type("LazyRecord", (dict,), {name: _closed for name in (
    "items", "keys", "values", "__iter__", "__len__", "get", "__getitem__", "__contains__")})
"""A dict loaded lazily from a store that has closed: every way of reading it raises StoreClosed."""

LazyRows = type("LazyRows", (list,), {name: _closed for name in ("__iter__", "__len__", "__getitem__")})
"""A result set whose cursor has closed: iterating it, or asking its length, raises StoreClosed."""


def _cycle_dict() -> dict:
    value: dict = {"name": "环"}
    value["self"] = value
    return value


def _cycle_list() -> list:
    value: list = [1]
    value.append(value)
    return value


Shapes = list[tuple[str, Callable[[], Any]]]

ODD_SHAPES: Shapes = [
    ("a cycle in a dict", _cycle_dict),
    ("a cycle in a list", _cycle_list),
    ("an int of 100,000 digits", lambda: 10 ** 100_000),
    ("binary bytes", lambda: bytes(range(256)) * 40),
    ("UTF-8 bytes", lambda: "上海晴 25 度。".encode() * 2000),
    ("a bytearray", lambda: bytearray(b"abc" * 5000)),
    ("a memoryview", lambda: memoryview(b"x" * 50_000)),
    ("NaN and infinities", lambda: {"x": float("nan"), "y": [float("inf"), float("-inf")]}),
    ("a set and a frozenset", lambda: {"tags": {"a", "b"}, "ids": frozenset({1, 2})}),
]

FAILING_SHAPES: Shapes = [
    ("a lazily loaded record whose store closed", lambda: LazyRecord(城市="上海")),
    ("a result set whose cursor closed", lambda: LazyRows([1, 2, 3])),
    ("a closed record inside plain data", lambda: {"rows": [1, LazyRecord(a=1)]}),
    ("an envelope whose data is a closed record", lambda: {"status": "ok", "data": LazyRecord(a=1)}),
]
