"""Property tests (hypothesis): on arbitrary input the road never raises and keeps its budgets.

Each property is one sentence a student could say:
* parse_tool_result always returns text within max_tokens, and JSON stays JSON.
* smart_truncate's output is head + marker + tail, the head a prefix, the tail a suffix, the count exact.
* shrink_json's JSON always fits max_chars; values that already fit come back unchanged.
* format_tool_message always gives valid JSON content that can be sent as UTF-8.
* The executor's data is JSON within result_max_chars, whatever the tool returned.
Example counts are modest so the suite stays fast; a long fuzz run lives elsewhere.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import re

from hypothesis import HealthCheck, given, settings, strategies as st

from toolkit import (PartialResult, SimulatedClock, TaskContext, ToolExecutor, ToolResult, dumps, estimate_tokens,
                     format_tool_message, parse_tool_result, shrink_json, smart_truncate, split_task_context,
                     use_clock)
from toolkit.messages import MESSAGE_MAX_CHARS
from toolkit.results import error_from_envelope
from toolkit.task_context import with_task_context

FAST = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class StrRaises:
    """An object whose __str__ raises (its repr stays printable for hypothesis reports)."""

    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        return "StrRaises()"


class HugeInt(int):
    """10**n with a short repr: hypothesis prints failing examples, and str(10**5000) raises."""

    def __repr__(self):
        return f"HugeInt(<{self.bit_length()} bits>)"


def _self_referencing(value):
    loop = [value]
    loop.append(loop)
    return {"loop": loop, "value": value}


def _deep(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


any_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None), max_size=300)
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(),  # floats include NaN and inf
    st.integers(4000, 6000).map(lambda n: HugeInt(10 ** n)),
    any_text, st.binary(max_size=200), st.datetimes(), st.dates(), st.decimals(),
    st.builds(StrRaises),
)
keys = st.one_of(any_text, st.integers(), st.none(), st.tuples(st.integers()), st.frozensets(st.integers()))
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=8), st.tuples(children, children),
        st.dictionaries(keys, children, max_size=8), st.frozensets(st.integers(), max_size=8),
        children.map(_self_referencing)),
    max_leaves=25,
) | st.integers(100, 5000).map(_deep) | st.lists(st.text(max_size=20), min_size=50, max_size=400)

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10 ** 12, 10 ** 12),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40)),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=10), children, max_size=6),
    max_leaves=30,
)


# --- parse_tool_result ----------------------------------------------------------------------------

@FAST
@given(values, st.integers(30, 2000))
def test_parse_tool_result_never_raises_and_fits_max_tokens(value, max_tokens):
    out = parse_tool_result(value, max_tokens=max_tokens)
    assert isinstance(out, str)
    assert estimate_tokens(out) <= max_tokens
    out.encode("utf-8")


@FAST
@given(st.one_of(st.lists(values, max_size=30), st.dictionaries(st.text(max_size=10), values, max_size=30)),
       st.integers(30, 500), st.sampled_from([None, "query", "write"]))
def test_structured_results_stay_valid_json(value, max_tokens, kind):
    out = parse_tool_result(value, max_tokens=max_tokens, kind=kind)
    if error_from_envelope(value) is None:
        json.loads(out)
    assert estimate_tokens(out) <= max_tokens


records = st.lists(st.dictionaries(st.sampled_from(["id", "金额", "name", "x"]), leaves, min_size=1, max_size=4),
                   min_size=2, max_size=300)


@FAST
@given(records, st.integers(30, 800))
def test_query_results_of_any_rows_stay_valid_json(rows, max_tokens):
    out = parse_tool_result(rows, max_tokens=max_tokens, kind="query")
    json.loads(out)
    assert estimate_tokens(out) <= max_tokens


@FAST
@given(values, any_text, st.integers(30, 500))
def test_partial_and_failed_results_fit_max_tokens(value, note, max_tokens):
    for result in (PartialResult(value, note), ToolResult("t", value, note, error_type="fatal"),
                   ToolResult("t", value, note, error_type="partial", missing=note), RuntimeError(note)):
        out = parse_tool_result(result, max_tokens=max_tokens)
        assert estimate_tokens(out) <= max_tokens


# --- smart_truncate ---------------------------------------------------------------------------------

MARKER = re.compile(r"\n\n…（已省略 (\d+) 字符）…\n\n")
# "…" is left out of the text so the marker can be found without ambiguity
truncate_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_characters="…"),
                        max_size=3000) | st.lists(st.text(max_size=80), max_size=120).map("\n".join)


@st.composite
def truncate_args(draw):
    keep_head = draw(st.integers(0, 800))
    keep_tail = draw(st.integers(0, 800))
    max_chars = draw(st.integers(keep_head + keep_tail, keep_head + keep_tail + 800))
    return max_chars, keep_head, keep_tail


@FAST
@given(truncate_text, truncate_args())
def test_smart_truncate_keeps_a_prefix_and_a_suffix_and_counts_exactly(text, args):
    max_chars, keep_head, keep_tail = args
    out = smart_truncate(text, max_chars=max_chars, keep_head=keep_head, keep_tail=keep_tail)
    if len(text) <= max_chars:
        assert out == text
        return
    match = MARKER.search(out)
    assert match is not None
    head, omitted, tail = out[:match.start()], int(match.group(1)), out[match.end():]
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text)
    assert len(head) <= keep_head and len(tail) <= keep_tail
    assert len(out) <= keep_head + keep_tail + len(match.group(0))


# --- shrink_json ---------------------------------------------------------------------------------------

@FAST
@given(values, st.integers(3, 5000))
def test_shrink_json_always_fits_and_is_valid_json(value, max_chars):
    text = dumps(shrink_json(value, max_chars))
    assert len(text) <= max_chars
    json.loads(text)
    text.encode("utf-8")


@FAST
@given(json_values, st.integers(3, 5000))
def test_values_that_fit_come_back_unchanged(value, max_chars):
    if len(dumps(value)) <= max_chars:
        assert shrink_json(value, max_chars) == value


# --- format_tool_message ---------------------------------------------------------------------------------

@FAST
@given(values, st.one_of(st.none(), any_text), st.sampled_from(["openai_chat", "openai_responses", "anthropic"]))
def test_format_tool_message_never_raises_and_gives_sendable_json(data, error, fmt):
    result = ToolResult("tool", data, error, duration_ms=1.5)
    message = format_tool_message("tool", "call_1", result, fmt=fmt)
    content = message.get("content", message.get("output"))
    body = json.loads(content)
    content.encode("utf-8")
    assert len(content) <= MESSAGE_MAX_CHARS
    assert body["status"] == ("success" if error is None else "error")


@FAST
@given(any_text, st.lists(st.text(max_size=20), max_size=5), st.integers(0, 6), any_text)
def test_task_context_round_trips(task, steps, done, content):
    context = TaskContext(task, steps, min(done, len(steps)))
    assert split_task_context(with_task_context(content, context)) == (context.render(), content)


# --- the executor's data budget ------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(values | st.text(st.sampled_from('a"\\\n\x00中'), max_size=3000), st.integers(20, 2000))
def test_executor_data_is_json_within_result_max_chars(value, result_max_chars):
    executor = ToolExecutor(result_max_chars=result_max_chars)
    with use_clock(SimulatedClock()):
        result = asyncio.run(executor.execute(lambda: value, "tool"))
    assert result.error is None
    text = dumps(result.data)
    assert len(text) <= result_max_chars
    json.loads(text)


def test_datetime_strategy_is_really_exercised():
    """A guard for the strategies above: unusual leaves render as text, not as exceptions."""
    out = shrink_json([dt.datetime(2024, 1, 1), StrRaises(), HugeInt(10 ** 5000)], 500)
    assert out[0] == "2024-01-01T00:00:00" and "StrRaises" in out[1] and "整数" in out[2]
