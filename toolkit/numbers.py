"""Reading numbers out of text and JSON values: the bottom floor the answer check and the tools' rules share.

Arabic numbers as a person writes them ("9,692", full-width "９６９２", "-3",
"46.4"), every number inside a JSON-like value (its numbers, and digits in its
strings and keys), Chinese numerals with units (chinese_value), and whether a
written number is one of a set (or its rounding, or a negative written without
its sign). Imports nothing from the toolkit, so `toolkit.verify` and a tool's
own answer rules (toolkit/tools/) both build on it without importing each other.
"""
from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Mapping

__all__ = ["NUMBER_TEXT", "ascii_digits", "chinese_value", "clauses", "numbers_in_text", "numbers_in_value",
           "supported"]

_FULLWIDTH = str.maketrans("０１２３４５６７８９．", "0123456789.")
_NUMBER = re.compile(r"(?<![0-9.])(-?)((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)(?![0-9])")
_CLAUSE = re.compile(r"[。；;！!？?\n，,]")
NUMBER_TEXT = r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?"  # one number as written, for a tool's rules


def ascii_digits(text: str) -> str:
    """Full-width digits and point made ASCII ("９６９２" -> "9692"): for a tool's rules."""
    return text.translate(_FULLWIDTH)


_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_SMALL_UNIT = {"十": 10, "百": 100, "千": 1000}
_BIG_UNIT = {"万": 10**4, "亿": 10**8}


def chinese_value(text: str) -> Decimal | None:
    """四千四百九十五 -> 4495, 两万零三百 -> 20300, 十二 -> 12; None for a run that is not a numeral with units
    (`text` holds only 零〇一二两三四五六七八九十百千万亿)."""
    if not any(c in _SMALL_UNIT or c in _BIG_UNIT for c in text):
        return None  # 一一 or 九六: digits read out one by one are not read
    total = section = digit = 0
    for char in text:
        if char in _DIGIT:
            digit = _DIGIT[char]
        elif char in _SMALL_UNIT:
            section += (digit or 1) * _SMALL_UNIT[char]
            digit = 0
        else:
            total = (total + section + digit) * _BIG_UNIT[char]
            section = digit = 0
    return Decimal(total + section + digit)


def clauses(answer: str) -> list[str]:
    """The answer cut at clause marks (。；！？，and newlines), full-width digits made ASCII: for a tool's rules."""
    return _CLAUSE.split(answer.translate(_FULLWIDTH))


def numbers_in_text(text: str) -> list[Decimal]:
    """Arabic numbers in `text`, in order (full-width digits and 9,692-style separators understood)."""
    text = text.translate(_FULLWIDTH)
    return [Decimal(sign + digits.replace(",", "")) for sign, digits in _NUMBER.findall(text)]


def numbers_in_value(value: Any, _depth: int = 0) -> set[Decimal]:
    """Every number in a JSON-like value: numeric values, and digits in its strings and keys."""
    found: set[Decimal] = set()
    if _depth > 50:
        return found
    if isinstance(value, bool) or value is None:
        return found
    if isinstance(value, (int, float, Decimal)):
        try:
            number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        except (InvalidOperation, ValueError):
            return found
        return {number} if number.is_finite() else found
    if isinstance(value, str):
        return set(numbers_in_text(value))
    if isinstance(value, Mapping):
        for key, item in value.items():
            found |= numbers_in_value(key, _depth + 1) | numbers_in_value(item, _depth + 1)
        return found
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            found |= numbers_in_value(item, _depth + 1)
    return found


def supported(number: Decimal, allowed: set[Decimal]) -> bool:
    """Whether `number` is one of `allowed`, or one of them rounded to `number`'s decimals ("46.4" for
    46.38), or a negative one written without its sign ("3" for -3)."""
    if number in allowed or (number >= 0 and -number in allowed):
        return True
    places = -number.as_tuple().exponent
    if not isinstance(places, int) or places <= 0:
        return False
    step = Decimal(1).scaleb(-places)
    for candidate in allowed:
        try:
            if abs(candidate).quantize(step, rounding=ROUND_HALF_UP) == abs(number):
                return True
        except InvalidOperation:
            continue
    return False
