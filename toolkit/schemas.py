"""Checking a value against a JSON schema someone else wrote, in bounded time: schema_validator, schema_problem.

A tool's argument schema (its author's, or an MCP server's inputSchema) and an MCP
server's outputSchema are applied to what the model or the server sent: the
schema and the value are both untrusted, so the check is bounded whatever they hold.
- `pattern` and `patternProperties` run on toolkit.patterns (an automaton over
  Python's own parse of the pattern: time linear in the text, to strings of at
  most PATTERN_MAX_CHARS characters); jsonschema would run them with `re`, whose
  backtracking takes exponential time on `^(a+)+$`.
- `uniqueItems` compares items by a canonical key (linear in the array);
  jsonschema compares every pair (4,000 objects: about a minute).
- Every keyword looks at the clock before it runs, so a schema that makes the
  check itself explode (anyOf over anyOf through $ref, 2^40 paths) stops at its
  time limit: `schema_problem` raises SchemaTooSlow past `seconds`.
"""
from __future__ import annotations

import contextvars
import math
import sys
import time
from typing import Any, Callable, Iterable

from .patterns import PATTERN_MAX_CHARS, UnsupportedPattern, matches
from .redaction import safe_str

__all__ = ["schema_validator", "schema_problem", "SchemaTooSlow", "SCHEMA_CHECK_SECONDS"]

SCHEMA_CHECK_SECONDS = 1.0  # real seconds one argument check may take (an MCP result's: the rest of its call's limit)

_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("schema_deadline", default=math.inf)


class SchemaTooSlow(Exception):
    """Checking a value against its schema took longer than its time limit."""


def _on_time() -> None:
    """Raise SchemaTooSlow when the running check has passed its deadline."""
    if time.monotonic() > _DEADLINE.get():
        raise SchemaTooSlow


def _timed(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """`keyword` (a jsonschema keyword function) that first looks at the clock: every step down into a schema
    runs a keyword, so a check that explodes meets its deadline."""
    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _on_time()
        return keyword(validator, value, instance, schema)
    return checked


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON values jsonschema counts as equal (1 and 1.0; never true and 1)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("d", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("o", repr(value))


def _validator_class(jsonschema: Any) -> Any:
    """Draft 2020-12 with every keyword on the clock, `uniqueItems` linear, and `pattern`, `patternProperties`
    and `additionalProperties` (which reads the patterns too) applied by toolkit.patterns instead of re."""
    from jsonschema import _keywords
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if not validator.is_type(instance, "string"):
            return
        try:
            if not matches(patrn, instance):
                yield ValidationError(f"{safe_str(instance, 80)!r} 不符合格式 {safe_str(patrn, 80)!r}")
        except UnsupportedPattern:
            raise
        except ValueError as exc:
            yield ValidationError(str(exc))

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                _on_time()
                try:
                    hit = matches(patrn, key)
                except UnsupportedPattern:
                    raise
                except ValueError as exc:
                    yield ValidationError(f"参数名{exc}")
                    continue
                if hit:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterable[Any]:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            yield from _keywords.additionalProperties(validator, allowed, instance, schema)
            return
        known = schema.get("properties", {})
        extras = [key for key in instance if key not in known and not _matched_by_any(patterns, key)]
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            yield ValidationError(f"不允许的参数名：{safe_str(', '.join(map(repr, sorted(extras))), 200)}")

    def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if not unique or not validator.is_type(instance, "array"):
            return
        seen: set = set()
        for item in instance:
            _on_time()
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"{safe_str(instance, 80)} 中有重复的元素")
                return
            seen.add(key)

    own = {"pattern": pattern, "patternProperties": pattern_properties,
           "additionalProperties": additional_properties, "uniqueItems": unique_items}
    base = jsonschema.Draft202012Validator
    return jsonschema.validators.extend(base, {name: _timed(own.get(name, keyword))
                                               for name, keyword in base.VALIDATORS.items()})


def _matched_by_any(patterns: Any, key: str) -> bool:
    _on_time()
    return any(len(key) <= PATTERN_MAX_CHARS and matches(p, key) for p in patterns)


def _jsonschema() -> Any:
    """jsonschema, imported on first use (importing toolkit stays fast).

    jsonschema's optional IRI format checker imports rfc3987_syntax, which builds a
    grammar at import time (about 1 s). Argument checking never checks formats, so
    that module is hidden while jsonschema is first imported, and only then.
    """
    hide = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
    if hide:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # makes its import fail fast
    try:
        import jsonschema
    finally:
        if hide:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


_VALIDATOR: Any = None  # the validator class (_validator_class), built on first use


def _keys(value: Any, depth: int = 0) -> Iterable[str]:
    """Every dict key inside a schema, at any depth (bounded)."""
    if depth > 60:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _keys(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item, depth + 1)


def schema_validator(schema: Any) -> Any:
    """A jsonschema Draft 2020-12 validator for `schema`: patterns in linear time, uniqueItems linear, every
    keyword on the clock of `schema_problem`.

    Raises UnsupportedPattern for a schema that uses unevaluatedProperties
    together with patternProperties (jsonschema would apply those patterns with
    re, out of reach of the linear matcher)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = _validator_class(_jsonschema())
    used = set(_keys(schema))
    if {"unevaluatedProperties", "patternProperties"} <= used:
        raise UnsupportedPattern("schema 同时用了 unevaluatedProperties 和 patternProperties，"
                                 "其中的 pattern 无法在线性时间内检查；请改用 additionalProperties")
    return _VALIDATOR(schema)


def schema_problem(validator: Any, instance: Any, seconds: float) -> tuple[str, str] | None:
    """(where, what) of the first problem of `instance` against `validator`'s schema, or None when it fits.

    `where` is the path ("items/3", or "(顶层)"). A value nested too deeply to
    check is a problem of the value. Raises SchemaTooSlow when the check takes
    longer than `seconds` of real time, whatever the schema and the value; the
    schema's own faults (an invalid schema, UnsupportedPattern) propagate."""
    token = _DEADLINE.set(time.monotonic() + max(seconds, 0.0))
    try:
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    except RecursionError:
        return "(顶层)", "嵌套太深，无法按 schema 检查"
    finally:
        _DEADLINE.reset(token)
    if not errors:
        return None
    return "/".join(str(p) for p in errors[0].path) or "(顶层)", safe_str(errors[0].message, 200)
