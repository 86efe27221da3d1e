"""Chapter 10's own checks judge each clear_old_results the chapter writes as the chapter says they do."""
from __future__ import annotations

import json

from answers.test_ch10_answers import versions
from toolkit.check import run_checks

FIRST = {"pairs_intact", "within_budget", "stops_at_budget", "keeps_last", "oldest_first", "says_how_back",
         "nothing_within_budget"}
SECOND = {"says_how_back", "input_untouched", "nothing_within_budget", "stops_at_budget"}
LOOP = {"says_how_back"}  # the third version's loop, before its placeholder says how to get a result back


def test_each_version_fails_exactly_what_the_chapter_shows():
    first, second, loop, final = versions()
    assert set(run_checks(first, "ch10").failed_ids()) == FIRST
    assert set(run_checks(second, "ch10").failed_ids()) == SECOND
    assert set(run_checks(loop, "ch10").failed_ids()) == LOOP
    assert run_checks(final, "ch10").ok


def test_a_version_that_clears_newest_first_is_caught():
    import copy

    def clear_old_results(messages, budget_chars, keep_last=3):
        out = copy.deepcopy(messages)
        results = [m for m in out if m.get("role") == "tool"]
        total = sum(len(m["content"]) for m in results)
        for m in reversed(results[:len(results) - keep_last]):
            if total <= budget_chars:
                break
            text = f"[已清除] 结果（{len(m['content'])} 字符）"
            total += len(text) - len(m["content"])
            m["content"] = text
        return out

    assert {"oldest_first", "says_how_back"} <= set(run_checks(clear_old_results, "ch10").failed_ids())


def _placeholder(m: dict, calls: dict) -> str:
    name, arguments = calls[m["tool_call_id"]]
    try:
        handle = json.loads(m["content"]).get("more", {}).get("result_id")
    except ValueError:
        handle = None
    return f"[已清除] {name}；read_more(result_id={handle})" if handle else f"[已清除] {name}（{arguments}）"


def test_a_version_that_clears_all_old_results_once_over_budget_is_caught():
    import copy

    def clear_old_results(messages, budget_chars, keep_last=3):
        out = copy.deepcopy(messages)
        calls = {c["id"]: (c["function"]["name"], c["function"]["arguments"])
                 for m in out for c in m.get("tool_calls") or []}
        tools = [m for m in out if m.get("role") == "tool"]
        if sum(len(m["content"]) for m in tools) <= budget_chars:
            return out
        for m in tools[:len(tools) - keep_last] if keep_last else tools:
            text = _placeholder(m, calls)
            if len(text) < len(m["content"]):
                m["content"] = text
        return out

    result = run_checks(clear_old_results, "ch10")
    assert result.failed_ids() == ["stops_at_budget"]
    assert "就该停" in next(r.reason for r in result.results if r.id == "stops_at_budget")


def test_a_version_that_clears_every_old_result_whatever_the_budget_is_caught():
    import copy

    def clear_old_results(messages, budget_chars, keep_last=3):
        out = copy.deepcopy(messages)
        calls = {c["id"]: (c["function"]["name"], c["function"]["arguments"])
                 for m in out for c in m.get("tool_calls") or []}
        tools = [m for m in out if m.get("role") == "tool"]
        for m in tools[:len(tools) - keep_last] if keep_last else tools:
            text = _placeholder(m, calls)
            if len(text) < len(m["content"]):
                m["content"] = text
        return out

    assert set(run_checks(clear_old_results, "ch10").failed_ids()) == {"stops_at_budget", "nothing_within_budget"}


def test_a_version_that_works_out_the_excess_first_passes():
    def clear_old_results(messages, budget_chars, keep_last=3):
        calls = {c["id"]: (c["function"]["name"], c["function"]["arguments"])
                 for m in messages for c in m.get("tool_calls") or []}
        where = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        excess = sum(len(messages[i]["content"]) for i in where) - budget_chars
        out = list(messages)  # new dicts for the replaced messages only: the input is never touched
        for i in where[:max(len(where) - keep_last, 0)]:
            if excess <= 0:
                break
            text = _placeholder(messages[i], calls)
            if len(text) < len(messages[i]["content"]):
                excess -= len(messages[i]["content"]) - len(text)
                out[i] = {**messages[i], "content": text}
        return out

    assert run_checks(clear_old_results, "ch10").ok
