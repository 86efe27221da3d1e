"""A schema's `pattern` in linear time: LinearPattern, an automaton over Python's own parse of the pattern.

JSON Schema's `pattern` and `patternProperties` are applied to what a model sent
(toolkit.registry), so they see untrusted text; Python's `re` backtracks, and a
pattern such as `^(a+)+$` or `(a|a)*b` takes exponential time on a few dozen
characters, with the event loop blocked. The pattern comes from a tool's author
or an MCP server. `LinearPattern(pattern).search(text)` answers
bool(re.search(pattern, text)) by moving a set of automaton states one character
at a time (Thompson's construction), each step remembered: time linear in the
text. `matches` applies it to strings of at most PATTERN_MAX_CHARS characters.
"""
from __future__ import annotations

import re
from re import _constants as _sre_constants  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Any, Callable, Iterable

from .redaction import safe_str

__all__ = ["LinearPattern", "UnsupportedPattern", "linear_pattern", "matches", "too_long", "PATTERN_MAX_CHARS"]

PATTERN_MAX_CHARS = 4096  # the longest string a schema pattern is applied to; a longer one is refused


class UnsupportedPattern(ValueError):
    """A pattern LinearPattern cannot run in linear time (or cannot parse); the message says which part."""


_C = _sre_constants
_STATE_CAP = 2000  # automaton states at most (a {m,n} repeat is unrolled); a larger pattern is refused
_CACHE_CAP = 20_000  # remembered steps (state set, character, context) per pattern; cleared when full
_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)
_UNSUPPORTED = {_C.GROUPREF: "反向引用", _C.GROUPREF_EXISTS: "条件分组", _C.ASSERT: "环视（lookahead/lookbehind）",
                _C.ASSERT_NOT: "环视（lookahead/lookbehind）", _C.POSSESSIVE_REPEAT: "占有量词",
                _C.ATOMIC_GROUP: "原子分组"}


def _word(ch: str | None, ascii_only: bool) -> bool:
    if ch is None:
        return False
    return (ch.isascii() or not ascii_only) and (ch.isalnum() or ch == "_")


def _category(code: Any, ascii_only: bool) -> Callable[[str], bool]:
    """A \\d \\s \\w class (or its negation) as Python's re reads it for str patterns (Unicode, or ASCII)."""
    negated = {_C.CATEGORY_NOT_DIGIT: _C.CATEGORY_DIGIT, _C.CATEGORY_NOT_SPACE: _C.CATEGORY_SPACE,
               _C.CATEGORY_NOT_WORD: _C.CATEGORY_WORD}
    positive = negated.get(code, code)
    test: Callable[[str], bool]
    if positive is _C.CATEGORY_DIGIT:
        test = (lambda ch: "0" <= ch <= "9") if ascii_only else str.isdecimal
    elif positive is _C.CATEGORY_SPACE:
        test = (lambda ch: ch in " \t\n\r\f\v") if ascii_only else str.isspace
    else:
        test = lambda ch: _word(ch, ascii_only)  # noqa: E731
    return (lambda ch: not test(ch)) if code in negated else test


class LinearPattern:
    """A regular expression run as an automaton: `search(text)` is bool(re.search(pattern, text)), in time
    linear in the text (each character moves a set of at most _STATE_CAP states, each step remembered).

    Python's own parser reads the pattern (re._parser), so the syntax and the meaning of \\d, \\w, \\s,
    ., ^, $, \\b and {m,n} are re's (IGNORECASE by comparing lower and upper case). Raises
    UnsupportedPattern (a ValueError, in Chinese) for what no linear-time engine can run: backreferences,
    lookaround, conditionals, atomic groups, possessive repeats; and for a pattern that does not parse
    or unrolls to more than _STATE_CAP states.
    """

    def __init__(self, pattern: str) -> None:
        try:
            parsed = _sre_parse.parse(pattern, 0)
        except re.error as exc:
            raise UnsupportedPattern(f"pattern {safe_str(pattern, 80)!r} 不是合法的正则表达式（{exc}）") from None
        except RecursionError:
            raise UnsupportedPattern(f"pattern {safe_str(pattern, 80)!r} 嵌套过深") from None
        flags = parsed.state.flags
        self.pattern = pattern
        self.ignore_case = bool(flags & re.IGNORECASE)
        self.ascii = bool(flags & re.ASCII)
        self.dotall = bool(flags & re.DOTALL)
        self.multiline = bool(flags & re.MULTILINE)
        self.kind: list[int] = []
        self.arg: list[Any] = []
        self.out: list[list[int]] = []
        self.asserts: set[Any] = set()
        match = self._node(_MATCH, None, [])
        try:
            self.start = self._sequence(list(parsed), match)
        except RecursionError:
            raise UnsupportedPattern(f"pattern {safe_str(pattern, 80)!r} 嵌套过深") from None
        self._cache: dict[tuple, frozenset[int]] = {}
        self._closures: dict[tuple, frozenset[int]] = {}

    # --- building the automaton, back to front (each part is given the state that follows it) ---
    def _node(self, kind: int, arg: Any, out: list[int]) -> int:
        if len(self.kind) >= _STATE_CAP:
            raise UnsupportedPattern(f"pattern {safe_str(self.pattern, 80)!r} 太大（展开后超过 {_STATE_CAP} 个状态）")
        self.kind.append(kind)
        self.arg.append(arg)
        self.out.append(out)
        return len(self.kind) - 1

    def _sequence(self, items: list, follow: int) -> int:
        for op, av in reversed(items):
            follow = self._item(op, av, follow)
        return follow

    def _item(self, op: Any, av: Any, follow: int) -> int:
        if op in _UNSUPPORTED:
            raise UnsupportedPattern(f"pattern {safe_str(self.pattern, 80)!r} 用了{_UNSUPPORTED[op]}，"
                                     "无法在线性时间内检查")
        if op in (_C.LITERAL, _C.NOT_LITERAL, _C.ANY, _C.IN):
            return self._node(_CHAR, self._test(op, av), [follow])
        if op is _C.BRANCH:
            starts = [self._sequence(list(branch), follow) for branch in av[1]]
            return self._node(_SPLIT, None, starts)
        if op is _C.SUBPATTERN:
            _, add, remove, body = av
            if add or remove:
                raise UnsupportedPattern(f"pattern {safe_str(self.pattern, 80)!r} 在分组里改了匹配标志，不支持")
            return self._sequence(list(body), follow)
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT):  # greedy or lazy: the same for whether it matches
            low, high, body = av
            body = list(body)
            if high is _C.MAXREPEAT:
                loop = self._node(_SPLIT, None, [])
                self.out[loop][:] = [self._sequence(body, loop), follow]
                tail = loop
            else:
                tail = follow
                for _ in range(high - low):  # (x(x(x)?)?)?
                    tail = self._node(_SPLIT, None, [self._sequence(body, tail), follow])
            for _ in range(low):
                tail = self._sequence(body, tail)
            return tail
        if op is _C.AT:
            self.asserts.add(av)
            return self._node(_ASSERT, av, [follow])
        raise UnsupportedPattern(f"pattern {safe_str(self.pattern, 80)!r} 里有不支持的写法（{op}）")

    def _test(self, op: Any, av: Any) -> Callable[[str], bool]:
        """The character test of one LITERAL / NOT_LITERAL / ANY / IN."""
        if op is _C.ANY:
            test = (lambda ch: True) if self.dotall else (lambda ch: ch != "\n")
            return test
        if op in (_C.LITERAL, _C.NOT_LITERAL):
            char = chr(av)
            test = (lambda ch: ch == char) if not self.ignore_case else \
                (lambda ch: ch == char or ch.lower() == char.lower() or ch.upper() == char.upper())
            return test if op is _C.LITERAL else (lambda ch: not test(ch))
        negate, literals, ranges, categories = False, set(), [], []
        for kind, value in av:
            if kind is _C.NEGATE:
                negate = True
            elif kind is _C.LITERAL:
                literals.add(chr(value))
            elif kind is _C.RANGE:
                ranges.append(value)
            elif kind is _C.CATEGORY:
                categories.append(_category(value, self.ascii))
            else:
                raise UnsupportedPattern(f"pattern {safe_str(self.pattern, 80)!r} 的字符类里有不支持的写法（{kind}）")

        def member(ch: str) -> bool:
            code = ord(ch)
            return ch in literals or any(lo <= code <= hi for lo, hi in ranges) or any(c(ch) for c in categories)

        def within(ch: str) -> bool:
            found = member(ch) or (self.ignore_case and (member(ch.lower()) or member(ch.upper())))
            return found != negate
        return within

    # --- running it ---
    def _holds(self, at: Any, ctx: tuple) -> bool:
        first, prev_newline, prev_word, last, next_newline, next_word, before_final_newline = ctx
        if at is _C.AT_BEGINNING:
            return first or (self.multiline and prev_newline)
        if at is _C.AT_BEGINNING_STRING:
            return first
        if at is _C.AT_END:
            return last or before_final_newline or (self.multiline and next_newline)
        if at is _C.AT_END_STRING:
            return last
        if at is _C.AT_BOUNDARY:
            return prev_word != next_word
        if at is _C.AT_NON_BOUNDARY:
            return prev_word == next_word and not (first and last)
        return False

    def _closure(self, states: Iterable[int], ctx: tuple) -> frozenset[int]:
        """Every state reachable from `states` without reading a character, where the assertions hold."""
        key = (frozenset(states), ctx)
        found = self._closures.get(key)
        if found is not None:
            return found
        seen: set[int] = set()
        stack = list(key[0])
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            kind = self.kind[state]
            if kind is _SPLIT:
                stack.extend(self.out[state])
            elif kind is _ASSERT:
                if self._holds(self.arg[state], ctx):
                    stack.append(self.out[state][0])
        found = frozenset(s for s in seen if self.kind[s] in (_CHAR, _MATCH))
        if len(self._closures) > _CACHE_CAP:
            self._closures.clear()
        self._closures[key] = found
        return found

    def _context(self, text: str, i: int) -> tuple:
        if not self.asserts:
            return ()
        prev = text[i - 1] if i > 0 else None
        nxt = text[i] if i < len(text) else None
        return (i == 0, prev == "\n", _word(prev, self.ascii), nxt is None, nxt == "\n", _word(nxt, self.ascii),
                i == len(text) - 1 and nxt == "\n")

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in `text` (re.search), in time linear in len(text)."""
        match = 0  # the MATCH state is built first
        current = self._closure((self.start,), self._context(text, 0))
        for i, ch in enumerate(text):
            if match in current:
                return True
            ctx = self._context(text, i + 1)
            key = (current, ch, ctx)
            following = self._cache.get(key)
            if following is None:
                moved = [self.out[s][0] for s in current if self.kind[s] is _CHAR and self.arg[s](ch)]
                following = self._closure([*moved, self.start], ctx)  # unanchored: a match may start anywhere
                if len(self._cache) > _CACHE_CAP:
                    self._cache.clear()
                self._cache[key] = following
            current = following
        return match in current


_COMPILED: dict[str, LinearPattern | UnsupportedPattern] = {}


def linear_pattern(pattern: str) -> LinearPattern:
    """LinearPattern(pattern), remembered for the process (at most 512 patterns); raises UnsupportedPattern."""
    found = _COMPILED.get(pattern)
    if found is None:
        try:
            found = LinearPattern(pattern)
        except UnsupportedPattern as exc:
            found = exc
        if len(_COMPILED) >= 512:
            _COMPILED.clear()
        _COMPILED[pattern] = found
    if isinstance(found, UnsupportedPattern):
        raise found
    return found


def too_long(text: str) -> str:
    return (f"字符串长 {len(text)} 个字符，超过了带 pattern 的参数能检查的长度（{PATTERN_MAX_CHARS} 个字符），"
            "没有检查；请缩短这个参数")


def matches(pattern: Any, text: str) -> bool:
    """Whether `text` matches `pattern` (a schema's pattern), in linear time; raises UnsupportedPattern,
    and ValueError for a string over PATTERN_MAX_CHARS."""
    if not isinstance(pattern, str):
        raise UnsupportedPattern(f"pattern 应是字符串，实际是 {type(pattern).__name__}")
    text = str.__str__(text)  # a str subclass's own methods are not called
    if len(text) > PATTERN_MAX_CHARS:
        raise ValueError(too_long(text))
    return linear_pattern(pattern).search(text)
