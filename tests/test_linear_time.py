"""Every regular expression in the toolkit runs in linear time, whatever text it is given.

A pattern that backtracks over the same stretch from every starting position costs n² on a
hostile text (a run of one character, its own separators repeated, thousands of blank lines),
and while it runs the event loop is blocked, so no timeout can fire. This file:

1. finds every pattern the toolkit has, by itself: compiled patterns among each module's
   values (lists and tuples of them included) and literal patterns handed to `re.*` inside
   functions (read from the source). A pattern missing from PATTERNS fails the test, so a
   new one cannot escape; DYNAMIC lists the calls whose pattern is not the toolkit's own;
2. builds adversarial inputs from each pattern's own characters and words (runs of each,
   each word repeated with each separator, a word then a long run, a run then the word,
   "a-b-c…"-style alternations), keeps the slowest two at a small size, and times them
   at 10^4 and 10^5 characters, the slowest of them also at 10^6;
3. does the same for the public functions that apply these patterns to untrusted text.

Linear means the time grows about 10x per 10x of input, quadratic about 100x; the bound is a
third of a quadratic's growth (< 33x per step). Time is the process's CPU time
(time.process_time, the fastest of several runs, the garbage collector paused, both sizes
measured again side by side before failing), so other processes on a loaded machine do not
count: wall-clock time there grew 40x for linear code at 10^6 characters, CPU time does not.
Where a public function ends in JSON encoding of the whole text, the part that reads the text
is measured (the offline model's reply, not its response body). `assert_linear` itself is
tested on the patterns that were quadratic before issue 18: it must fail them. No wall-clock
limit anywhere.
"""
from __future__ import annotations

import ast
import collections
import functools
import gc
import importlib
import pkgutil
import re
import re._parser as sre  # the standard library's own pattern parser, to read a pattern's alphabet
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import toolkit

ROOT = Path(toolkit.__file__).parent
SIZES = (1_000, 10_000, 100_000, 1_000_000)  # the first step only makes an n² pattern fail in seconds, not hours
QUADRATIC = 100.0         # what a 10x size step costs an n² pattern
MAX_RATIO = QUADRATIC / 3  # per 10x size step: linear is about 10, so a loaded machine has room; n² cannot pass
SCREEN_SIZE = 1_500       # every shape is tried at this size; the slowest go on to the real sizes
KEEP = 2                  # shapes per pattern (or function) timed at the real sizes

# --- every pattern, and how the code applies it ---------------------------------------------------
# "scan": search / finditer / sub / split / findall, i.e. tried from every position (the hard case);
# "match" / "fullmatch": anchored at the start, as the code calls it (said where).
PATTERNS: dict[str, str] = {
    "toolkit.redaction._SECRET_PATTERNS[0]": "scan",
    "toolkit.redaction._SECRET_PATTERNS[1]": "scan",
    "toolkit.redaction._SECRET_PATTERNS[2]": "scan",
    "toolkit.redaction._SECRET_PATTERNS[3]": "scan",
    "toolkit.redaction._SECRET_PATTERNS[4]": "scan",
    "toolkit.redaction._SECRET_PATTERNS[5]": "scan",
    "toolkit.redaction._SECRET_HINT": "scan",
    "toolkit.redaction.SECRET_FIELD": "match",            # safety._secret_field: SECRET_FIELD.match(name)
    **{f"toolkit.safety.INJECTION_PATTERNS[{i}]": "scan" for i in range(10)},
    "toolkit.safety._CJK_GAP": "scan",
    "toolkit.safety._SPREAD_LETTERS": "scan",
    "toolkit.safety._SEPARATOR": "scan",
    "toolkit.safety._WORD_CHAR": "match",               # _joined: one character
    "toolkit.task_context._STEP_WORDS": "scan",
    "toolkit.task_context._FINE_WORDS": "scan",
    "toolkit.task_context._STEP_TRIM": "scan",
    "toolkit.task_context: (\\d+)/(\\d+)": "fullmatch",   # TaskContext.parse, one field
    "toolkit.verify._LIST_MARKER": "scan",
    "toolkit.numbers._NUMBER": "scan",
    "toolkit.numbers._CLAUSE": "scan",
    "toolkit.claims._CLAUSE_END": "scan",
    "toolkit.claims._NUMBER": "scan",
    "toolkit.claims._CHINESE_NUMBER": "scan",
    "toolkit.claims._COUNT_AFTER": "match",             # right after a number
    "toolkit.claims._TOTAL_WORD": "scan",
    "toolkit.claims._RELATION": "scan",
    "toolkit.claims._RELATION_AFTER": "match",          # right after a number
    "toolkit.claims._RANGE": "match",                   # right after a number
    "toolkit.claims._COPULA": "fullmatch",              # the gap between a number and a total word
    "toolkit.claims._RANK_WORD": "scan",
    "toolkit.claims._NEGATION": "scan",
    "toolkit.claims._LINK": "fullmatch",                # the gap between a rank word and a name
    "toolkit.claims._THAN": "fullmatch",                # the gap between two names
    "toolkit.claims._AFTER_THAN": "match",              # right after a name
    "toolkit.claims._VERB": "fullmatch",                # the gap between two names
    "toolkit.claims._SYMBOL": "fullmatch",              # the gap between two names ("4495 > ")
    "toolkit.claims._COMPARATIVE": "match",             # right after a name ("更高")
    "toolkit.claims._INSTEAD": "match",                 # at a clause's start ("而是")
    "toolkit.claims._LATER_AFTER": "match",             # right after a name ("排第二")
    "toolkit.claims._LATER_BEFORE": "scan",             # searched in the 8 characters before a name
    "toolkit.claims._SENTENCE_END": "scan",
    "toolkit.truncate._SENTENCE_END": "scan",
    "toolkit.truncate._TOKEN_CHAR": "match",              # _secret_around: one character at a position
    "toolkit.truncate._TOKEN_RUN": "match",               # _secret_around: from a position, bounded by _RUN_REACH
    "toolkit.llm.config._PLACEHOLDER": "scan",
    "toolkit.llm.config._KEY_CHARS": "fullmatch",        # a key from .env or the environment
    "toolkit.llm.offline.arguments._DATE": "scan",
    "toolkit.llm.offline.planning._CJK_RUN": "scan",
    "toolkit.llm.offline.planning._FILLER": "scan",
    "toolkit.llm.offline.planning: [a-z]{2,}": "scan",
    "toolkit.tools.sales._UNSIGNED": "fullmatch",        # one CSV cell
    "toolkit.tools.sales._NEGATIVE": "fullmatch",        # one CSV cell
    "toolkit.tools.travel._DATE": "fullmatch",           # a date argument
    "toolkit.check._ex01._SPLIT": "scan",
    "toolkit.check._ex01: :?-{3,}:?": "fullmatch",
    "toolkit.check._ex01: \\|(\\s*:?-{3,}:?\\s*\\|)+": "fullmatch",
    "toolkit.check._ex01.SHOWN": "search",               # the note line of a student's table
    "toolkit.check._ex01.TOTAL": "search",
    "toolkit.check._ch02.MARKER": "scan",
    "toolkit.llm.offline.longrun._HANDLE": "scan",          # a result_id in a tool message the model reads
    "toolkit.llm.offline.longrun._NOTE_PAGE": "match",      # anchored after the note's mark (longrun._notes)
    "toolkit.check.build.BEGIN": "match",                # one line of a solution notebook's cell
    "toolkit.check.build.END": "match",
    "toolkit.check._class.NOTEBOOK_NAME": "fullmatch", # a file name
    "toolkit.check.notebook.CHECK_CELL": "scan",         # a student's cell source
}

# re.* calls whose pattern is not the toolkit's own text, and why that is acceptable
DYNAMIC: dict[str, str] = {
    "toolkit.llm.offline.arguments: re.search(pattern, value)":
        "a tool schema's own `pattern` (written by the tool's author) checked against one short candidate value",
}

_RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}


def _modules() -> list[Any]:
    names = ["toolkit"] + [m.name for m in pkgutil.walk_packages(toolkit.__path__, "toolkit.")
                           if not m.name.endswith("__main__")]
    return [importlib.import_module(name) for name in names]


def _patterns_in(value: Any, where: str, depth: int = 0) -> Iterator[tuple[str, re.Pattern]]:
    if isinstance(value, re.Pattern):
        yield where, value
    elif depth < 3 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _patterns_in(item, f"{where}[{i}]" if depth == 0 else where, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for key, item in value.items():
            yield from _patterns_in(item, f"{where}[{key!r}]" if depth == 0 else where, depth + 1)


def _compiled() -> dict[str, re.Pattern]:
    """Every compiled pattern among the modules' values (and their classes' attributes), once each."""
    found: dict[int, tuple[str, re.Pattern]] = {}
    for module in _modules():
        for name, value in vars(module).items():
            holders = [(f"{module.__name__}.{name}", value)]
            if isinstance(value, type) and value.__module__ == module.__name__:
                holders += [(f"{module.__name__}.{name}.{k}", v) for k, v in vars(value).items()]
            for where, item in holders:
                for ident, pattern in _patterns_in(item, where):
                    if id(pattern) not in found or ident < found[id(pattern)][0]:
                        found[id(pattern)] = (ident, pattern)
    return dict(found.values())


def _flags(nodes: list[ast.expr]) -> int:
    flags = 0
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "re":
                flags |= getattr(re, sub.attr, 0) if isinstance(getattr(re, sub.attr, None), int) else 0
    return flags


def _calls_in_functions(tree: ast.AST) -> set[int]:
    """ids of the Call nodes that run inside a function (not once at import)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(sub) for sub in ast.walk(node) if isinstance(sub, ast.Call))
    return inside


def _inline() -> tuple[dict[str, re.Pattern], list[str]]:
    """Literal patterns passed to re.* outside module-level compiles, and the calls whose pattern is not a literal.

    A module-level re.compile(...) is stored in a module value, where _compiled() finds it with its name.
    """
    literal: dict[str, re.Pattern] = {}
    dynamic: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_functions = _calls_in_functions(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _RE_FUNCS and node.args):
                continue
            if node.func.attr == "compile" and id(node) not in in_functions:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                literal[f"{module}: {first.value}"] = re.compile(first.value, _flags(node.args[1:]))
            else:
                dynamic.append(f"{module}: re.{node.func.attr}({', '.join(ast.unparse(a) for a in node.args)})")
    return literal, dynamic


@functools.cache
def all_patterns() -> dict[str, re.Pattern]:
    return {**_compiled(), **_inline()[0]}


def test_every_pattern_in_the_toolkit_is_listed_with_how_it_is_applied() -> None:
    found = all_patterns()
    missing = sorted(set(found) - set(PATTERNS))
    assert not missing, ("patterns not covered by the linear-time test; add each to PATTERNS with how the code "
                         f"applies it: {missing}")
    stale = sorted(set(PATTERNS) - set(found))
    assert not stale, f"PATTERNS lists patterns the toolkit no longer has: {stale}"
    assert sorted(_inline()[1]) == sorted(DYNAMIC), "a re.* call with a pattern that is not a literal: list it in DYNAMIC"
    assert len(found) >= 40  # the search itself works (about 50 patterns today)


# --- adversarial inputs -------------------------------------------------------------------------------

_CATEGORY_CHARS = {sre.CATEGORY_DIGIT: "7", sre.CATEGORY_NOT_DIGIT: "x", sre.CATEGORY_SPACE: " ",
                   sre.CATEGORY_NOT_SPACE: "x", sre.CATEGORY_WORD: "a", sre.CATEGORY_NOT_WORD: "-"}
GENERIC_CHARS = (" ", "\n", "\t", "a", "7", "-", ".", ",", "，", "中", "\u3000")


def alphabet(pattern: re.Pattern) -> tuple[set[str], set[str]]:
    """(characters, words) the pattern names: its literals, one member of each class, its literal runs."""
    chars: set[str] = set()
    words: set[str] = set()

    def walk(items: Any) -> None:
        run = ""
        for op, av in items:
            if op is sre.LITERAL:
                run += chr(av)
                chars.add(chr(av))
                continue
            if len(run) > 1:
                words.add(run)
            run = ""
            if op is sre.IN:
                for kind, arg in av:
                    if kind is sre.LITERAL:
                        chars.add(chr(arg))
                    elif kind is sre.RANGE:
                        chars.update({chr(arg[0]), chr(arg[1])})
                    elif kind is sre.CATEGORY:
                        chars.add(_CATEGORY_CHARS.get(arg, "a"))
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                walk(av[2])
            elif op is sre.SUBPATTERN:
                walk(av[3])
            elif op is sre.ATOMIC_GROUP:
                walk(av)
            elif op is sre.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                walk(av[1])
        if len(run) > 1:
            words.add(run)

    walk(sre.parse(pattern.pattern, pattern.flags).data)
    return chars | set(GENERIC_CHARS), words


def _fill(unit: str, n: int) -> str:
    """`unit` repeated to about n characters, whole units only: every size ends the same way."""
    return unit * max(n // len(unit), 1)


def shapes(chars: set[str], words: set[str]) -> dict[str, Callable[[int], str]]:
    """Named makers of hostile texts of n characters from these characters and words."""
    made: dict[str, Callable[[int], str]] = {}
    letters = sorted(c for c in chars if c.isalnum())[:4] or ["a"]
    for c in chars:
        made[f"run {c!r}"] = lambda n, c=c: c * n
        made[f"a run of {c!r} inside a text"] = lambda n, c=c: "a" + c * n + "a!"
        for letter in letters:
            made[f"{letter!r}{c!r} alternating"] = lambda n, u=letter + c: _fill(u, n)
    fillers = {c for c in chars if not c.isalnum()} | {"a", "7", "中"}  # a word's own letters: "w repeated"
    for w in words:
        made[f"{w!r} repeated"] = lambda n, w=w: _fill(w, n)
        for c in fillers:
            made[f"{w!r}+{c!r} repeated"] = lambda n, u=w + c: _fill(u, n)
            made[f"{w!r} then a run of {c!r}"] = lambda n, w=w, c=c: w + c * (n - len(w))
            made[f"a run of {c!r} then {w!r}"] = lambda n, w=w, c=c: c * (n - len(w) - 1) + w + "!"
            made[f"a run of {c!r} between two {w!r}"] = lambda n, w=w, c=c: w + c * n + w + "!"
    made["blank lines"] = lambda n: _fill(" \n", n)
    return made


def _apply(pattern: re.Pattern, mode: str) -> Callable[[str], Any]:
    if mode == "scan":
        return lambda text: collections.deque(pattern.finditer(text), maxlen=0)
    return getattr(pattern, mode)


def _best(fn: Callable[[str], Any], text: str, runs: int) -> float:
    """The least CPU time (process_time) of `runs` calls, the garbage collector paused: other processes on a
    shared machine do not count, and neither do the collector's pauses."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(runs):
            start = time.process_time()
            fn(text)
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return max(best, 1e-7)


def _slowest(fn: Callable[[str], Any], makers: dict[str, Callable[[int], str]]) -> list[str]:
    """The KEEP slowest shapes: every shape once at SCREEN_SIZE, then the ten slowest again (best of 3) at
    three times that, so one stall of a shared machine cannot push the worst shape out."""
    first = sorted(((_best(fn, make(SCREEN_SIZE), 1), name) for name, make in makers.items()), reverse=True)
    second = sorted(((_best(fn, makers[name](3 * SCREEN_SIZE), 3), name) for _, name in first[:10]), reverse=True)
    return [name for _, name in second[:KEEP]]


def _runs(size: int, one: float) -> int:
    """How many runs to take the fastest of: more for small texts, fewer when one run is already long."""
    runs = 2 if size >= 1_000_000 else 3 if size >= 100_000 else 5
    return 1 if one > 0.5 else min(runs, 2) if one > 0.05 else runs


def assert_linear(fn: Callable[[str], Any], make: Callable[[int], str], what: str,
                  sizes: tuple[int, ...] = SIZES) -> list[float]:
    """Time fn at `sizes` (CPU time, fastest of several runs); each 10x step must cost less than MAX_RATIO x."""
    times: list[float] = []
    for size in sizes:
        text = make(size)
        one = _best(fn, text, 1)
        runs = _runs(size, one)
        took = min(one, _best(fn, text, runs - 1)) if runs > 1 else one
        for _ in range(3):  # measure both again before failing, side by side: a stall of the machine is not n²
            if not times or took / times[-1] < MAX_RATIO:
                break
            times[-1] = min(times[-1], _best(fn, make(size // 10), runs * 2))
            took = min(took, _best(fn, text, runs))
        assert not times or took / times[-1] < MAX_RATIO, (
            f"{what}: {size // 10:,} -> {size:,} characters took {times[-1] * 1e3:.2f} ms -> {took * 1e3:.2f} ms "
            f"of CPU ({took / times[-1]:.0f}x for 10x the input; linear is about 10x, quadratic {QUADRATIC:.0f}x)")
        times.append(took)
    return times


def _sizes(rank: int) -> tuple[int, ...]:
    """The sizes for the rank-th slowest shape: the slowest goes up to 10^6 characters, the others to 10^5. The
    step to 10^6 catches an n² part that is still small at 10^5 (a third of the linear part or more there); it is
    the costly step (check_answer: 6-10 s a shape), taken once per pattern or function, on its worst shape."""
    return SIZES if rank == 0 else SIZES[:-1]


@pytest.mark.parametrize("ident", sorted(PATTERNS))
def test_pattern_time_grows_linearly_with_the_text(ident: str) -> None:
    pattern = all_patterns()[ident]
    fn = _apply(pattern, PATTERNS[ident])
    makers = shapes(*alphabet(pattern))
    for rank, name in enumerate(_slowest(fn, makers)):
        assert_linear(fn, makers[name], f"{ident} ({PATTERNS[ident]}) on {name}", sizes=_sizes(rank))


# --- the public functions that apply them to untrusted text -------------------------------------------

def _entry_points() -> dict[str, Callable[[str], Any]]:
    from toolkit import classify_error, format_tool_message
    from toolkit.redaction import redact, safe_str
    from toolkit.readback import read_tool_content
    from toolkit.results import parse_retry_after
    from toolkit.safety import detect_instructions, normalize_for_scan
    from toolkit.task_context import TaskContext, split_steps
    from toolkit.verify import check_answer
    from toolkit.agent.loop import task_context_for

    sales = {"status": "ok", "data": {"row_count": 5, "total_sales": 9692, "highest_category": "显示器",
                                      "highest_sales": 4495, "category_sales": [
                                          {"category": "显示器", "sales": 4495}, {"category": "键盘", "sales": 2985},
                                          {"category": "鼠标", "sales": 2212}]}, "source": [], "error": None}
    return {
        "redact": redact,
        "safe_str": safe_str,
        "safe_str(exception)": lambda text: safe_str(ValueError(text), 300),
        "classify_error": lambda text: classify_error(RuntimeError(text)),
        "normalize_for_scan": normalize_for_scan,
        "detect_instructions": detect_instructions,
        "format_tool_message": lambda text: format_tool_message("web_page", "call_1", {"page": text}),
        "format_tool_message(task context)": lambda text: format_tool_message(
            "web_page", "call_1", text, task_context=TaskContext(text, [text, "下一步"])),
        "split_steps": split_steps,
        "split_steps(fine)": lambda text: split_steps(text, fine=True),
        "TaskContext.parse": TaskContext.parse,
        "read_tool_content": read_tool_content,
        "check_answer": lambda text: check_answer(text, sales),
        "check_answer(question)": lambda text: check_answer("显示器 4495，总销售额 9692", sales, question=text),
        "parse_retry_after": lambda text: parse_retry_after({"retry-after": text, "retry-after-ms": text}),
        "offline model (its reply, without the JSON body)": _offline_reply,
        "run_agent's task context": lambda text: task_context_for(text),
    }


def _offline_reply(text: str) -> Any:
    """What the offline model makes of a question, before the response body is encoded: the part that reads
    the text (the whole respond() also hashes and JSON-encodes the request, linear but memory-bound at 10^6)."""
    from toolkit.llm.offline import read_messages, read_model, read_tools, variant_reply
    from toolkit.llm.offline.request import view_of

    request = {"model": "offline-stand-in", "messages": [{"role": "user", "content": text}]}
    _, variant = read_model(request)
    return variant_reply(variant, view_of(read_messages(request)), read_tools(request), None)


ENTRY_POINTS = sorted(_entry_points())


@functools.cache
def _function_shapes() -> dict[str, Callable[[int], str]]:
    chars, words = set(GENERIC_CHARS), set()
    for pattern in all_patterns().values():
        more_chars, more_words = alphabet(pattern)
        chars |= {c for c in more_chars if c.isprintable() or c in "\n\t"}
        words |= more_words
    words |= {"https://a-b", "eyJ-", "token: ", "system:", "#", "然后", "总销售额", "合计", "最高", "[TASK_CONTEXT]"}
    made = {name: make for name, make in shapes(set(GENERIC_CHARS) | {"@", ":", "=", "/", "_"}, set()).items()}
    for w in words:  # each word with the generic separators (all pairs would be thousands of shapes)
        for c in (" ", "\n", "-", ".", "，", ":"):
            made[f"{w!r}+{c!r} repeated"] = lambda n, u=w + c: _fill(u, n)
        made[f"{w!r} then a run of ' '"] = lambda n, w=w: w + " " * (n - len(w))
        made[f"a run of ' ' then {w!r}"] = lambda n, w=w: " " * (n - len(w) - 1) + w + "!"
        made[f"a run of ' ' between two {w!r}"] = lambda n, w=w: w + " " * n + w + "!"
    return made


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_public_function_time_grows_linearly_with_untrusted_text(name: str) -> None:
    fn = _entry_points()[name]
    makers = _function_shapes()
    for rank, shape in enumerate(_slowest(fn, makers)):
        assert_linear(fn, makers[shape], f"{name} on {shape}", sizes=_sizes(rank))


# --- the cases that were quadratic, by name ------------------------------------------------------------

@pytest.mark.parametrize("what, fn, make", [
    ("redact on a-b-c…", "redact", lambda n: _fill("a-", n)),
    ("redact on a.b.c…", "redact", lambda n: _fill("a.", n)),
    ("redact on eyJ-eyJ-…", "redact", lambda n: _fill("eyJ-", n)),
    ("safe_str on a.b.c…", "safe_str(exception)", lambda n: _fill("a.", n)),
    ("the injection scan on blank lines", "format_tool_message", lambda n: "\n" * n),
    ("the step splitter on spaces", "split_steps", lambda n: " " * (n - 1) + "x"),
    ("run_agent's task context on a question of spaces", "run_agent's task context",
     lambda n: "查天气" + " " * n + "吗"),
    ("run_agent's task context on spaces around a step word", "run_agent's task context",
     lambda n: "查天气" + " " * (n // 2) + "然后查航班" + " " * (n // 2) + "吗"),
])
def test_the_shapes_that_were_quadratic_are_linear(what: str, fn: str, make: Callable[[int], str]) -> None:
    assert_linear(_entry_points()[fn], make, what)


# --- the measure itself: it fails the patterns that were quadratic before issue 18 ----------------------------

_OLD_PUNCT = "，,；;。！!？?"
OLD_QUADRATIC = [  # the patterns as they were (git show c031a66), on the texts that made them n²
    ("the URL-userinfo pattern", r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s/@:\"'\\]+:)[^\s/@\"'\\]+(@)", lambda n: _fill("a-", n)),
    ("the JWT pattern", r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}", lambda n: _fill("eyJa-", n)),
    ("the role-marker pattern", r"(?im)^\s*(?:system|assistant)\s*[:：]", lambda n: "\n" * n),
    ("the step splitter's trim", rf"^(?:[\s{_OLD_PUNCT}、]|顺便|再|并且)+|[\s{_OLD_PUNCT}、]+$", lambda n: "x" + " " * n + "x"),
]


@pytest.mark.parametrize("what, pattern, make", OLD_QUADRATIC, ids=[o[0] for o in OLD_QUADRATIC])
def test_the_measure_fails_the_patterns_that_were_quadratic(what: str, pattern: str,
                                                             make: Callable[[int], str]) -> None:
    """assert_linear on the old patterns, at 500 -> 5,000 characters (where n² already shows as about 100x: 96x to
    155x measured; at 10^3 -> 10^4 the same ratios took up to 2 s a run, times the re-measures before failing):
    it must fail every one of them, or it would pass a quadratic pattern too."""
    fn = _apply(re.compile(pattern), "scan")
    with pytest.raises(AssertionError, match="for 10x the input"):
        assert_linear(fn, make, f"{what} before issue 18", sizes=(500, 5_000))
