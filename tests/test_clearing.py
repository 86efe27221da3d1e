"""Clearing old tool results: over generated histories in the three wire formats, every call keeps exactly its
result (ids match, nothing moves), the results fit the budget unless what must be kept does not, the kept ones
are untouched, the input is not modified, and a placeholder says how to get the result back."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.clearing import CLEARED_MARK, ClearPolicy, clear_tool_results, context_chars, placeholder, tool_results

FORMATS = ("openai_chat", "openai_responses", "anthropic")
TOOLS = ("query_orders", "read_more", "send_notice", "get_weather")


@st.composite
def histories(draw, fmt: str) -> list:
    """A conversation: a question, then turns of 1-3 tool calls each answered, some with a read_more handle (in
    Anthropic's format some results are a list of text blocks, the SDK's usual shape)."""
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
            content = json.dumps(body, ensure_ascii=False)
            if fmt == "anthropic" and draw(st.booleans()):
                content = [{"type": "text", "text": content}]
            calls.append((f"call_{n}", draw(st.sampled_from(TOOLS)), json.dumps({"n": n}), content))
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


def _unpaired(messages: list, fmt: str) -> list[str]:
    """What each API would refuse: a call id not answered by exactly one result where that API looks for it
    (Chat: the tool messages right after the assistant message; Responses: a function_call_output after the
    function_call; Anthropic: a tool_result block in the very next user message), or a result answering no call."""
    wrong: list[str] = []
    if fmt == "openai_chat":
        open_ids: list[str] = []
        for m in messages:
            if m.get("role") == "tool":
                if m.get("tool_call_id") not in open_ids:
                    wrong.append(f"result {m.get('tool_call_id')} answers no open call")
                else:
                    open_ids.remove(m["tool_call_id"])
                continue
            wrong += [f"call {i} unanswered" for i in open_ids]
            open_ids = [c["id"] for c in m.get("tool_calls") or []] if m.get("role") == "assistant" else []
        wrong += [f"call {i} unanswered" for i in open_ids]
    elif fmt == "openai_responses":
        calls = [m["call_id"] for m in messages if m.get("type") == "function_call"]
        for k, m in enumerate(messages):
            if m.get("type") == "function_call":
                answers = [x for x in messages[k + 1:] if x.get("type") == "function_call_output"
                           and x.get("call_id") == m["call_id"]]
                if len(answers) != 1:
                    wrong.append(f"call {m['call_id']} has {len(answers)} outputs after it")
            elif m.get("type") == "function_call_output" and m.get("call_id") not in calls:
                wrong.append(f"output {m.get('call_id')} answers no call")
    else:
        for k, m in enumerate(messages):
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                ids = [b["id"] for b in m["content"] if b.get("type") == "tool_use"]
                following = messages[k + 1] if k + 1 < len(messages) else {}
                blocks = following.get("content") if following.get("role") == "user" else None
                answered = [b.get("tool_use_id") for b in blocks or [] if isinstance(b, dict)
                            and b.get("type") == "tool_result"]
                if ids and sorted(answered) != sorted(ids):
                    wrong.append(f"tool_use {ids} answered by {answered}")
    return wrong


def _text(content) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _handle_of(content) -> int | None:
    """The read_more result id the original result offered, read here independently of the module."""
    texts = [b["text"] for b in content if b.get("type") == "text"] if isinstance(content, list) else [content]
    for text in texts:
        value = json.loads(text)
        if isinstance(value, dict) and isinstance(value.get("more"), dict):
            return value["more"]["result_id"]
    return None


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), budget=st.integers(0, 20_000), keep_last=st.integers(0, 4),
       exempt=st.sets(st.sampled_from(TOOLS), max_size=2))
def test_clearing_keeps_every_pair_and_the_budget_in_every_format(fmt, data, budget, keep_last, exempt):
    messages = data.draw(histories(fmt))
    original = copy.deepcopy(messages)
    out = clear_tool_results(messages, fmt=fmt, budget_chars=budget, keep_last=keep_last, exempt=exempt)
    assert messages == original, "the input list is never modified"
    assert _unpaired(out.messages, fmt) == [], "every call keeps exactly its result where its API looks for it"
    assert _skeleton(out.messages) == _skeleton(messages), "only result contents change: ids, order, calls stay"
    before, after = tool_results(messages, fmt), tool_results(out.messages, fmt)
    assert [r.call_id for r in after] == [r.call_id for r in before]
    assert out.results_after == sum(r.size for r in after) and out.results_before == sum(r.size for r in before)
    protected = set(range(len(before) - keep_last, len(before))) if keep_last else set()
    protected |= {i for i, r in enumerate(before) if r.name in exempt}
    contents, new_contents = _contents(messages, fmt), _contents(out.messages, fmt)
    clearable = [i for i, b in enumerate(before)
                 if i not in protected and not b.cleared and len(placeholder(b, _text(contents[i]))) < b.size]
    newly = [i for i, (b, a) in enumerate(zip(before, after)) if a.cleared and not b.cleared]
    for i, (b, a) in enumerate(zip(before, after)):
        if i in protected:
            assert a.size == b.size and not a.cleared, "the last keep_last results and exempt tools' are kept"
        assert a.size == b.size or i in newly, "a result changes only by being cleared"
    assert set(newly) <= set(clearable), "only a result that may be cleared and gets shorter is cleared"
    left = [i for i in clearable if i not in newly]
    assert not newly or not left or max(newly) < min(left), "the oldest clearable results go first"
    assert list(out.cleared) == [before[i].call_id for i in newly]
    if out.results_after > budget:
        assert left == [], "over budget only when nothing more could be cleared"
    if newly:  # minimal: without the last one cleared the results were still over budget
        last = newly[-1]
        assert out.results_after - after[last].size + before[last].size > budget, "nothing cleared once within budget"
    for i in newly:  # the placeholder names the tool and says how to get the result back
        text, handle = new_contents[i], _handle_of(contents[i])
        assert before[i].name in text
        assert (f"read_more(result_id={handle})" in text) if handle is not None else ("再调用一次" in text)
    again = clear_tool_results(out.messages, fmt=fmt, budget_chars=budget, keep_last=keep_last, exempt=exempt)
    assert again.cleared == () and again.messages == out.messages, "clearing twice changes nothing more"


def _contents(messages: list, fmt: str) -> list:
    if fmt == "openai_chat":
        return [m["content"] for m in messages if m.get("role") == "tool"]
    if fmt == "openai_responses":
        return [m["output"] for m in messages if m.get("type") == "function_call_output"]
    return [b["content"] for m in messages if m.get("role") == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


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


def test_one_exempt_name_given_as_a_string_is_that_tool_and_anything_else_is_refused():
    receipt = json.dumps({"status": "success", "result": "已发送" * 300}, ensure_ascii=False)
    messages = [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "s", "type": "function", "function": {"name": "send_notice", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "s", "content": receipt}]
    assert clear_tool_results(messages, budget_chars=0, keep_last=0, exempt="send_notice").cleared == ()
    assert ClearPolicy(exempt="send_notice").exempt == ("send_notice",)
    assert ClearPolicy(budget_chars=0, keep_last=0, exempt="send_notice").apply(messages).cleared == ()
    assert ClearPolicy(exempt=["send_notice", "read_more"]).exempt == ("send_notice", "read_more")
    for bad in (3, ["send_notice", 3]):
        with pytest.raises(ValueError, match="exempt"):
            ClearPolicy(exempt=bad)
        with pytest.raises(ValueError, match="exempt"):
            clear_tool_results(messages, exempt=bad)


def test_an_anthropic_result_made_of_text_blocks_keeps_its_read_more_handle_in_the_placeholder():
    body = json.dumps({"status": "success", "more": {"result_id": 5}, "result": "页" * 500}, ensure_ascii=False)
    messages = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "query_orders",
                                                   "input": {"status": "已支付"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                              "content": [{"type": "text", "text": body}]}]}]
    text = clear_tool_results(messages, fmt="anthropic", budget_chars=0, keep_last=0).messages[1]["content"][0]["content"]
    assert "read_more(result_id=5)" in text and "再调用一次" not in text
