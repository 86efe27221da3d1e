"""Exercise 04: format_tool_turn — the replies to one turn of parallel tool calls, ids matched, errors marked.

Chapter 04 builds the message for one result. A model may ask for several tools in one turn; the program runs
them in parallel, so the results come back keyed by call id in the order they finished. The exercise writes
`format_tool_turn(tool_calls, results, fmt="openai_chat") -> list[dict]`: one reply per call, in the calls'
order, each answering its own call's id (for the Responses API the `call_id`, not the item's `id`); a call
without a result still gets a reply, an error; Anthropic wants all the tool_result blocks in one user message.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from ..results import ToolResult
from ._ch04 import content_of, raises_value_error
from ._core import Check, Exercise, Fail, expect
from ._plain import describe
from ._props import property_check

WEATHER_SH = ToolResult("get_weather", {"city": "上海", "condition": "多云", "temp_c": 28}, duration_ms=40.0)
WEATHER_BJ = ToolResult("get_weather", None, "请求超时，可以稍后重试", error_type="retryable", error_code="TIMEOUT",
                        attempts=3)
FLIGHTS = ToolResult("search_flights", {"flights": [{"no": "LAB1", "depart": "08:00"}]}, duration_ms=55.0)
PARTIAL = ToolResult("get_weather", {"上海": "多云"}, "部分结果缺失：北京", error_type="partial", missing="北京")
CALLS = (("get_weather", {"city": "上海"}), ("get_weather", {"city": "北京"}), ("search_flights",
                                                                          {"origin": "北京", "destination": "上海"}))


def raw_call(fmt: str, i: int, name: str, arguments: dict) -> tuple[dict, str]:
    """A model's tool call in `fmt` and the id its reply must answer."""
    text = json.dumps(arguments, ensure_ascii=False)
    if fmt == "openai_responses":
        return ({"type": "function_call", "id": f"fc_{i}a", "call_id": f"call_{i}b", "name": name,
                 "arguments": text}, f"call_{i}b")
    if fmt == "anthropic":
        return {"type": "tool_use", "id": f"toolu_{i}c", "name": name, "input": arguments}, f"toolu_{i}c"
    return {"id": f"call_{i}d", "type": "function", "function": {"name": name, "arguments": text}}, f"call_{i}d"


def turn(fmt: str, results: Sequence[ToolResult | None], order: list[int] | None = None) -> tuple[list, dict, list]:
    """(the calls, the results keyed by id in `order` — the order they finished —, the ids in call order)."""
    calls, ids = [], []
    for i, result in enumerate(results):
        name, arguments = CALLS[i % len(CALLS)] if result is None else (result.name, {"city": "上海"})
        call, call_id = raw_call(fmt, i, name, arguments)
        calls.append(call)
        ids.append(call_id)
    keyed = {ids[i]: results[i] for i in (order or range(len(results))) if results[i] is not None}
    return calls, keyed, ids


def replies(play: Any, fmt: str, calls: list, keyed: dict) -> list[dict]:
    """The replies as one list of messages (Chat, Responses) or blocks (Anthropic's single user message)."""
    out = expect(play(calls, keyed, fmt=fmt) if fmt != "openai_chat" else play(calls, keyed), list)
    if fmt != "anthropic":
        return out
    if not out and calls:
        raise Fail(f"anthropic：{len(calls)} 个调用应有 {len(calls)} 条回复，得到 0 条（每个调用都要有回复，哪怕是错误）")
    if len(out) != 1 or not isinstance(out[0], dict) or out[0].get("role") != "user":
        raise Fail(f"Anthropic 要求一轮的全部 tool_result 放进同一条 user 消息：应返回 [{{'role': 'user', 'content': "
                   f"[块, 块, …]}}]，得到 {len(out)} 项：{str(out)[:100]}")
    return expect(out[0].get("content"), list, "这条 user 消息的 content 应该是")


ID_KEY = {"openai_chat": "tool_call_id", "openai_responses": "call_id", "anthropic": "tool_use_id"}
BODY = {"openai_chat": "content", "openai_responses": "output", "anthropic": "content"}


def answered(fmt: str, got: list, ids: list, results: Sequence[ToolResult | None]) -> None:
    """Each reply answers its call's id, in the calls' order, with its own result (or an error for none)."""
    if len(got) != len(ids):
        raise Fail(f"{fmt}：{len(ids)} 个调用应有 {len(ids)} 条回复，得到 {len(got)} 条（每个调用都要有回复，哪怕是错误）")
    for reply, call_id, result in zip(got, ids, results):
        if not isinstance(reply, dict) or reply.get(ID_KEY[fmt]) != call_id:
            raise Fail(f"{fmt}：第 {ids.index(call_id) + 1} 条回复的 {ID_KEY[fmt]} 应是 {call_id!r}（按调用的顺序），"
                       f"得到 {reply.get(ID_KEY[fmt]) if isinstance(reply, dict) else describe(reply)}")
        payload = content_of(reply, BODY[fmt])
        if result is not None and payload.get("result") != result.data:
            raise Fail(f"{fmt}：回复 {call_id} 带的是别的调用的结果 {str(payload.get('result'))[:60]}："
                       "结果要按 id 对上，不能按完成的顺序")
        want_status = "error" if result is None else result.status
        if payload.get("status") != want_status:
            why = "这个调用没有结果，应回复一条错误" if result is None else f"它的结果 status 是 {result.status}"
            raise Fail(f"{fmt}：回复 {call_id} 的 status 是 {payload.get('status')!r}，{why}")
        if fmt == "anthropic" and reply.get("is_error") is not (want_status == "error"):
            raise Fail(f"anthropic：回复 {call_id} 的 is_error 应是 {want_status == 'error'}（status {want_status}），"
                       f"得到 {reply.get('is_error')!r}")


def check_chat(play: Any) -> None:
    results = [WEATHER_SH, FLIGHTS]
    calls, keyed, ids = turn("openai_chat", results)
    got = replies(play, "openai_chat", calls, keyed)
    if any(not isinstance(m, dict) or m.get("role") != "tool" for m in got):
        raise Fail(f"Chat Completions 的每条回复都是 role='tool' 的消息，得到 {str(got)[:100]}")
    answered("openai_chat", got, ids, results)


def check_order(play: Any) -> None:
    results = [WEATHER_SH, WEATHER_BJ, FLIGHTS]
    for order in ([2, 0, 1], [1, 2, 0]):  # the order the parallel calls finished in
        calls, keyed, ids = turn("openai_chat", results, order)
        answered("openai_chat", replies(play, "openai_chat", calls, keyed), ids, results)


def check_responses(play: Any) -> None:
    results = [WEATHER_SH, FLIGHTS]
    calls, keyed, ids = turn("openai_responses", results, [1, 0])
    got = replies(play, "openai_responses", calls, keyed)
    if any(not isinstance(m, dict) or m.get("type") != "function_call_output" for m in got):
        raise Fail(f"Responses 的每条回复都是 type='function_call_output' 的项，得到 {str(got)[:100]}")
    answered("openai_responses", got, ids, results)


def check_anthropic(play: Any) -> None:
    results = [WEATHER_SH, WEATHER_BJ, PARTIAL]
    calls, keyed, ids = turn("anthropic", results, [2, 1, 0])
    blocks = replies(play, "anthropic", calls, keyed)
    if any(not isinstance(b, dict) or b.get("type") != "tool_result" for b in blocks):
        raise Fail(f"user 消息里的每一块都是 type='tool_result'，得到 {str(blocks)[:100]}")
    answered("anthropic", blocks, ids, results)


def check_missing(play: Any) -> None:
    results = [WEATHER_SH, None, FLIGHTS]
    for fmt in ("openai_chat", "openai_responses", "anthropic"):
        calls, keyed, ids = turn(fmt, results)
        answered(fmt, replies(play, fmt, calls, keyed), ids, results)


def check_errors_marked(play: Any) -> None:
    results = [WEATHER_BJ, PARTIAL]
    calls, keyed, ids = turn("openai_chat", results)
    got = replies(play, "openai_chat", calls, keyed)
    answered("openai_chat", got, ids, results)
    for reply, result in zip(got, results):
        payload = content_of(reply)
        if payload.get("error_type") != result.error_type:
            raise Fail(f"失败的结果要带 error_type={result.error_type!r}（重试有没有用），得到 {payload.get('error_type')!r}")


def check_arguments(play: Any) -> None:
    for fmt in ("openai_chat", "openai_responses", "anthropic"):
        out = play([], {}, fmt=fmt)
        if out != []:
            raise Fail(f"{fmt}：没有调用时应返回空列表（没有什么要回复），得到 {describe(out)}")
    calls, keyed, _ = turn("openai_chat", [WEATHER_SH])
    raises_value_error(play, "未知的 fmt（例如 'xml'）", calls, keyed, fmt="xml")


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    pool = [WEATHER_SH, WEATHER_BJ, FLIGHTS, PARTIAL, None]
    # the order the calls finished in is drawn up front (a permutation), not by a random.Random used during the
    # test: a draw made in the middle would change when shrinking stops early (see _props.MAX_SHRINK_STEPS)
    picks = st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=5)
    cases = st.tuples(st.sampled_from(["openai_chat", "openai_responses", "anthropic"]),
                      picks.flatmap(lambda p: st.tuples(st.just(p), st.permutations(range(len(p))))))

    def classify(case: tuple) -> set[str]:
        fmt, (picks, _) = case
        return {fmt, "有调用没结果" if len(pool) - 1 in picks else "都有结果", "多个调用" if len(picks) > 1 else "一个调用"}

    def test(case: tuple) -> None:
        fmt, (picks, order) = case
        results = [pool[i] for i in picks]
        calls, keyed, ids = turn(fmt, results, list(order))
        answered(fmt, replies(play, fmt, calls, keyed), ids, results)

    property_check(cases, test, examples=50, classify=classify,
                   cover={"openai_chat": 8, "openai_responses": 8, "anthropic": 8, "有调用没结果": 8, "都有结果": 8,
                          "多个调用": 15})


EXERCISE = Exercise("04", "04_tool_messages", "一轮并行调用的全部回复：id 对上，错误标明", "format_tool_turn", (
    Check("chat_one_per_call", "Chat Completions：每个调用一条 role=tool 消息，按调用的顺序",
          "for call in tool_calls: …（用 parse_tool_call 读出 id 和工具名）", check_chat),
    Check("matched_by_id", "结果按 id 对上调用，不按完成的顺序", "results 是 {id: ToolResult}：用 results.get(id) 取",
          check_order),
    Check("responses_call_id", "Responses：function_call_output 回答的是 call_id，不是 fc_ 开头的 id",
          "parse_tool_call 读出的 id 就是 call_id", check_responses),
    Check("anthropic_one_message", "Anthropic：全部 tool_result 块放进同一条 user 消息，is_error 按 status",
          "return [{'role': 'user', 'content': [块, 块, …]}]", check_anthropic),
    Check("missing_is_error", "没有结果的调用也有回复：一条 status 为 error 的消息",
          "results 里找不到这个 id 时，用一个失败的 ToolResult 代替", check_missing),
    Check("errors_marked", "失败和部分成功的结果保留 status 和 error_type", "每条回复都用 toolkit 的 format_tool_message 生成",
          check_errors_marked),
    Check("edge_arguments", "没有调用时返回 []；未知 fmt 抛出 ValueError", "先检查 fmt，再处理调用", check_arguments),
    Check("random_turns", "随机的 50 轮：调用数、完成顺序、缺结果的调用都随机，每条回复都对得上（hypothesis）",
          "id、顺序、缺的结果、Anthropic 的单条 user 消息：前面几条检查合在一起", check_random),
))
