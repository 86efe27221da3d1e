"""Clearing old tool results: over generated histories in the three wire formats, every call keeps exactly its
result (ids match, nothing moves), the results fit the budget unless what must be kept does not, the kept ones
are untouched, the input is not modified, and a placeholder says how to get the result back."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.clearing import CLEARED_MARK, clear_tool_results, context_chars, placeholder, tool_results

FORMATS = ("openai_chat", "openai_responses", "anthropic")
TOOLS = ("query_orders", "read_more", "send_notice", "get_weather")


@st.composite
def histories(draw, fmt: str) -> list:
    """A conversation: a question, then turns of 1-3 tool calls each answered, some with a read_more handle."""
    messages: list = [{"role": "user", "content": "问题"}]
    n = 0
    for _ in range(draw(st.integers(0, 12))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            n += 1
            size = draw(st.integers(0, 3000))
            body = {"status": "success", "result": "数" * size}
            if draw(st.booleans()):
                body["more"] = {"result_id": n, "total_chars": size * 2}
            calls.append((f"call_{n}", draw(st.sampled_from(TOOLS)), json.dumps({"n": n}),
                          json.dumps(body, ensure_ascii=False)))
        if fmt == "openai_chat":
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [{"id": i, "type": "function", "function": {"name": t, "arguments": a}}
                                            for i, t, a, _ in calls]})
            messages += [{"role": "tool", "tool_call_id": i, "content": c} for i, _, _, c in calls]
        elif fmt == "openai_responses":
            messages += [{"type": "function_call", "call_id": i, "name": t, "arguments": a} for i, t, a, _ in calls]
            messages += [{"type": "function_call_output", "call_id": i, "output": c} for i, _, _, c in calls]
        else:
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": t,
                                                               "input": json.loads(a)} for i, t, a, _ in calls]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": c}
                                                         for i, _, _, c in calls]})
        if draw(st.booleans()):
            messages.append({"role": "assistant", "content": "中间的说明"})
    return messages


def _skeleton(messages: list) -> list:
    """The list with every result's content taken out: what clearing must never change."""
    def strip(m):
        m = copy.deepcopy(m)
        if m.get("role") == "tool":
            m["content"] = None
        if m.get("type") == "function_call_output":
            m["output"] = None
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    b["content"] = None
        return m
    return [strip(m) for m in messages]


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), budget=st.integers(0, 20_000), keep_last=st.integers(0, 4),
       exempt=st.sets(st.sampled_from(TOOLS), max_size=2))
def test_clearing_keeps_every_pair_and_the_budget_in_every_format(fmt, data, budget, keep_last, exempt):
    messages = data.draw(histories(fmt))
    original = copy.deepcopy(messages)
    out = clear_tool_results(messages, fmt=fmt, budget_chars=budget, keep_last=keep_last, exempt=exempt)
    assert messages == original, "the input list is never modified"
    assert _skeleton(out.messages) == _skeleton(messages), "only result contents change: ids, order, calls stay"
    before, after = tool_results(messages, fmt), tool_results(out.messages, fmt)
    assert [r.call_id for r in after] == [r.call_id for r in before]
    assert out.results_after == sum(r.size for r in after) and out.results_before == sum(r.size for r in before)
    protected = set(range(len(before) - keep_last, len(before))) if keep_last else set()
    protected |= {i for i, r in enumerate(before) if r.name in exempt}
    for i, (b, a) in enumerate(zip(before, after)):
        if i in protected:
            assert a.size == b.size and not a.cleared, "kept results are untouched"
        if a.cleared and not b.cleared:
            assert a.size < b.size and b.call_id in out.cleared
    if out.results_after > budget:  # over budget only when nothing more could be cleared
        texts = _contents(out.messages, fmt)
        assert all(i in protected or a.cleared or len(placeholder(a, texts[i])) >= a.size
                   for i, a in enumerate(after))
    again = clear_tool_results(out.messages, fmt=fmt, budget_chars=budget, keep_last=keep_last, exempt=exempt)
    assert again.cleared == () and again.messages == out.messages, "clearing twice changes nothing more"


def _contents(messages: list, fmt: str) -> list[str]:
    if fmt == "openai_chat":
        return [m["content"] for m in messages if m.get("role") == "tool"]
    if fmt == "openai_responses":
        return [m["output"] for m in messages if m.get("type") == "function_call_output"]
    return [b["content"] for m in messages if m.get("role") == "user" and isinstance(m["content"], list)
            for b in m["content"]]


def test_a_placeholder_says_what_was_there_and_how_to_get_it_back():
    handle = json.dumps({"status": "success", "result": "页" * 500, "more": {"result_id": 7}}, ensure_ascii=False)
    plain = json.dumps({"status": "success", "result": "晴" * 500}, ensure_ascii=False)
    messages = [{"role": "user", "content": "问"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "query_orders", "arguments": '{"status": "已支付"}'}},
                    {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]},
                {"role": "tool", "tool_call_id": "a", "content": handle},
                {"role": "tool", "tool_call_id": "b", "content": plain}]
    out = clear_tool_results(messages, budget_chars=0, keep_last=0)
    first, second = out.messages[2]["content"], out.messages[3]["content"]
    assert first.startswith(CLEARED_MARK) and "query_orders" in first and "read_more(result_id=7)" in first
    assert "get_weather" in second and '"city": "上海"' in second and "再调用一次" in second
    assert out.cleared == ("a", "b") and context_chars(out.messages) < context_chars(messages)


def test_nothing_is_cleared_within_the_budget_and_bad_settings_are_refused():
    messages = [{"role": "tool", "tool_call_id": "x", "content": "短"}]
    assert clear_tool_results(messages, budget_chars=100).cleared == ()
    for bad in ({"keep_last": -1}, {"budget_chars": -5}, {"fmt": "gemini"}, {"keep_last": True}):
        with pytest.raises(ValueError):
            clear_tool_results(messages, **bad)
