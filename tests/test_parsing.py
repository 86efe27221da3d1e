"""Tests for toolkit.parsing: the five strategies, tool kinds, smart_truncate and budgeted JSON."""
from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessage

from toolkit import PartialResult, ToolResult, dumps, estimate_tokens, parse_tool_result, shrink_json, smart_truncate
from toolkit.fitting import fit_for_model
from toolkit.parsing import to_markdown_table

MARKER = re.compile(r"\n\n…（已省略 (\d+) 字符）…\n\n")


def _split(output: str) -> tuple[str, int, str]:
    """(head, omitted, tail) of a smart_truncate output; fails the test when there is no marker."""
    match = MARKER.search(output)
    assert match, f"no omission marker in {output[:80]!r}"
    return output[:match.start()], int(match.group(1)), output[match.end():]


def _left_out(text: str) -> tuple[int, int]:
    """(items left out, total) from the note '…还有 N 项未显示（共 M 项）'."""
    match = re.search(r"还有 (\d+) 项未显示（共 (\d+) 项）", text)
    assert match, f"no 'left out' note in {text[-200:]!r}"
    return int(match.group(1)), int(match.group(2))


# --- strategy 1: pass-through ------------------------------------------------------------

def test_short_text_passes_through_unchanged():
    assert parse_tool_result("晴，25°C") == "晴，25°C"


def test_text_exactly_at_the_budget_passes_through():
    text = "a" * 400
    assert parse_tool_result(text, max_tokens=100) == text


# --- strategy 2: JSON ------------------------------------------------------------------------

def test_dict_becomes_compact_json_with_chinese_visible():
    out = parse_tool_result({"city": "上海", "temp": 25})
    assert json.loads(out) == {"city": "上海", "temp": 25}
    assert "上海" in out and "\\u" not in out


def test_seed_bug_error_none_is_a_success():
    value = {"status": "ok", "error": None, "data": [1, 2]}
    out = parse_tool_result(value)
    assert json.loads(out) == value
    assert "失败" not in out


def test_big_json_stays_valid_json_and_counts_what_was_left_out():
    items = [{"id": i, "name": f"商品{i}", "price": i * 1.5} for i in range(1000)]
    out = parse_tool_result({"items": items, "total": 1000}, max_tokens=200)
    parsed = json.loads(out)
    assert estimate_tokens(out) <= 200
    assert parsed["total"] == 1000
    shown = [item for item in parsed["items"] if isinstance(item, dict)]
    assert shown == items[:len(shown)] and shown  # the first items, unchanged
    left_out, total = _left_out(out)
    assert total == 1000
    assert left_out == 1000 - len(shown)


def test_big_json_text_is_shrunk_as_json_not_cut_as_text():
    text = json.dumps([{"id": i, "note": "x" * 30} for i in range(500)])
    out = parse_tool_result(text, max_tokens=100)
    parsed = json.loads(out)
    assert isinstance(parsed, list)
    left_out, total = _left_out(out)
    assert total == 500 and left_out == 500 - (len(parsed) - 1)


def test_long_string_values_are_shortened_with_a_count():
    out = parse_tool_result({"body": "长" * 5000}, max_tokens=100)
    body = json.loads(out)["body"]
    kept = body.split("…")[0]
    omitted = int(re.search(r"省略 (\d+) 字符", body).group(1))
    assert len(kept) + omitted == 5000


def test_lists_and_numbers_become_json():
    assert json.loads(parse_tool_result([1, 2, 3])) == [1, 2, 3]
    assert parse_tool_result(42) == "42"
    assert parse_tool_result(None) == "null"


# --- strategy 3: head + tail -------------------------------------------------------------------

def test_long_text_keeps_head_and_tail_with_exact_omitted_count():
    text = "\n".join(f"第{i}行：数据" for i in range(3000))
    out = parse_tool_result(text, max_tokens=300)
    head, omitted, tail = _split(out)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text)
    assert "第0行" in head and "第2999行" in tail
    assert estimate_tokens(out) <= 300


def test_chinese_text_budget_counts_each_character_as_a_token():
    out = parse_tool_result("中" * 10_000, max_tokens=100)
    assert estimate_tokens(out) <= 100


# --- strategy 4: errors ---------------------------------------------------------------------------

def test_exception_becomes_one_readable_line():
    out = parse_tool_result(TimeoutError("slow"))
    assert out.startswith("✘")
    assert "可重试" in out and "TIMEOUT" in out


def test_fatal_exception_says_not_retryable():
    out = parse_tool_result(PermissionError("denied"))
    assert "不可重试" in out and "PERMISSION_DENIED" in out


def test_seed_error_dict_is_converted():
    assert parse_tool_result({"error": "网络超时"}) == "✘ 工具执行失败（不可重试，TOOL_ERROR）: 网络超时"


def test_seed_003_envelope_shows_code_and_message():
    out = parse_tool_result({"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到 sales.csv"}})
    assert "FILE_NOT_FOUND" in out and "找不到 sales.csv" in out


def test_failed_tool_result_becomes_an_error_line():
    out = parse_tool_result(ToolResult("t", None, "上游 503", error_type="retryable", error_code="UNAVAILABLE"))
    assert out.startswith("✘") and "上游 503" in out and "可重试" in out


def test_long_error_messages_respect_the_budget():
    out = parse_tool_result(ValueError("错" * 2000), max_tokens=50)
    assert out.startswith("✘")
    assert estimate_tokens(out) <= 50


def test_partial_result_says_what_is_missing_and_shows_the_data():
    out = parse_tool_result(PartialResult({"上海": "晴"}, "北京的天气接口超时"))
    first, _, rest = out.partition("\n")
    assert "部分成功" in first and "北京的天气接口超时" in first
    assert json.loads(rest) == {"上海": "晴"}


def test_partial_result_with_long_note_and_data_stays_in_budget():
    out = parse_tool_result(PartialResult(["数据" * 50] * 100, "缺失" * 400), max_tokens=200)
    assert estimate_tokens(out) <= 200
    assert json.loads(out.partition("\n")[2])


# --- strategy 5: Markdown -----------------------------------------------------------------------------

def test_markdown_style_renders_records_as_a_table():
    out = parse_tool_result([{"产品": "显示器", "金额": 4495}, {"产品": "键盘", "金额": 10}], style="markdown")
    lines = out.splitlines()
    assert lines[0] == "| 产品 | 金额 |"
    assert lines[1] == "|---|---|"
    assert lines[2] == "| 显示器 | 4495 |"


def test_markdown_table_escapes_pipes_and_newlines():
    table = to_markdown_table([{"a": "x|y", "b": "line1\nline2"}])
    assert "x\\|y" in table and "line1 line2" in table


def test_markdown_table_says_how_many_rows_were_shown():
    table = to_markdown_table([{"n": i} for i in range(30)], max_rows=5)
    assert "仅显示前 5 行，共 30 行" in table
    assert sum(1 for line in table.splitlines() if line.startswith("| ")) == 1 + 5  # header + 5 rows


def test_markdown_style_shows_the_first_rows_of_many():
    out = parse_tool_result([{"n": i, "名称": f"商品{i}"} for i in range(1000)], style="markdown")
    assert out.startswith("| n | 名称 |")
    assert "仅显示前 20 行，共 1000 行" in out


def test_markdown_style_leaves_non_records_as_json():
    assert json.loads(parse_tool_result({"a": 1}, style="markdown")) == {"a": 1}


# --- tool kinds ---------------------------------------------------------------------------------------

def test_query_kind_gives_first_rows_count_and_stats():
    rows = [{"region": "华东", "amount": i} for i in range(500)]
    summary = json.loads(parse_tool_result(rows, max_tokens=300, kind="query"))
    assert summary["row_count"] == 500
    assert summary["rows"] == rows[:summary["rows_shown"]] and summary["rows_shown"] >= 1
    assert summary["stats"]["amount"] == {"count": 500, "sum": sum(range(500)), "min": 0, "max": 499,
                                          "mean": 249.5}


def test_query_stats_over_a_sample_never_claim_a_total():
    rows = [{"amount": 1} for _ in range(25_000)]  # more rows than the statistics look at
    summary = json.loads(parse_tool_result(rows, max_tokens=300, kind="query"))
    assert summary["row_count"] == 25_000
    stats = summary["stats"]["amount"]
    assert "sum" not in stats and "count" not in stats  # a sample's sum would be read as the total
    assert stats["sampled_rows"] < 25_000 and stats["mean"] == 1
    assert "估计" in summary["note"]


def test_markdown_table_shows_rows_that_are_not_dicts_as_values():
    table = to_markdown_table([{"a": 1}, 7])
    assert "| a | value |" in table and "| 1 |  |" in table and "|  | 7 |" in table


def test_query_stats_skip_values_float_cannot_hold():
    rows = [{"id": i, "huge": 10 ** 400, "inf": float("inf"), "flag": True, "note": "x" * 40} for i in range(200)]
    summary = json.loads(parse_tool_result(rows, max_tokens=400, kind="query"))
    assert summary["row_count"] == 200
    assert set(summary["stats"]) == {"id"}  # no OverflowError from float(10**400); bools are not numbers


def test_query_kind_that_fits_is_returned_whole():
    rows = [{"a": 1}, {"a": 2}]
    assert json.loads(parse_tool_result(rows, kind="query")) == rows


def test_read_kind_uses_its_share_of_the_context():
    text = "\n".join("x" * 50 for _ in range(2000))
    out = parse_tool_result(text, max_tokens=2000, kind="read", context_tokens=1000, read_share=0.2)
    assert estimate_tokens(out) <= 200
    head, omitted, tail = _split(out)
    assert len(head) + omitted + len(tail) == len(text)


def test_write_kind_keeps_only_status_and_ids():
    out = parse_tool_result({"status": "ok", "id": "abc", "order_id": 5, "payload": "x" * 1000}, kind="write")
    assert json.loads(out) == {"status": "ok", "id": "abc", "order_id": 5}


def test_write_kind_without_status_fields_says_ok():
    assert json.loads(parse_tool_result({"rows": [1, 2, 3]}, kind="write")) == {"status": "ok"}


@pytest.mark.parametrize("kwargs", [{"max_tokens": 0}, {"max_tokens": -1}, {"max_tokens": 1.5},
                                    {"max_tokens": True}, {"kind": "delete"}, {"style": "html"}])
def test_bad_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        parse_tool_result("x", **kwargs)


# --- smart_truncate ---------------------------------------------------------------------------------------

def test_short_text_is_not_truncated():
    assert smart_truncate("hello", max_chars=10, keep_head=4, keep_tail=4) == "hello"


def test_head_ends_at_a_line_break_and_tail_starts_at_one():
    text = "".join(f"line {i:04d} of the report\n" for i in range(1000))
    out = smart_truncate(text, max_chars=8000, keep_head=4000, keep_tail=2000)
    head, omitted, tail = _split(out)
    assert text.startswith(head) and text.endswith(tail)
    assert text[len(head)] == "\n"                      # head stops right before a line break
    assert text[len(text) - len(tail) - 1] == "\n"      # tail starts right after one
    assert len(head) + omitted + len(tail) == len(text)
    assert 2000 <= len(head) <= 4000 and 1000 <= len(tail) <= 2000


def test_head_prefers_a_paragraph_boundary():
    text = ("段落一。" * 100 + "\n\n") * 10 + "尾" * 10_000
    head, _, _ = _split(smart_truncate(text, max_chars=3000, keep_head=2000, keep_tail=500))
    assert text[len(head):len(head) + 2] == "\n\n"


def test_head_falls_back_to_a_sentence_end():
    text = "这是一句话。" * 2000
    head, _, _ = _split(smart_truncate(text, max_chars=1000, keep_head=500, keep_tail=200))
    assert head.endswith("。")


def test_text_without_boundaries_is_cut_at_exact_sizes():
    text = "x" * 10_000
    head, omitted, tail = _split(smart_truncate(text, max_chars=1000, keep_head=600, keep_tail=300))
    assert (len(head), omitted, len(tail)) == (600, 9100, 300)


def test_truncated_output_is_never_longer_than_head_tail_and_marker():
    text = "abc\n" * 5000
    out = smart_truncate(text, max_chars=1000, keep_head=500, keep_tail=300)
    marker = MARKER.search(out).group(0)
    assert len(out) <= 500 + 300 + len(marker)


def test_zero_head_or_tail_is_allowed():
    head, omitted, tail = _split(smart_truncate("y" * 100, max_chars=10, keep_head=0, keep_tail=5))
    assert (head, omitted, tail) == ("", 95, "yyyyy")
    head, omitted, tail = _split(smart_truncate("y" * 100, max_chars=10, keep_head=5, keep_tail=0))
    assert (head, omitted, tail) == ("yyyyy", 95, "")


def test_truncate_parts_are_the_pieces_smart_truncate_joins():
    from toolkit.truncate import Truncation, truncate_parts

    text = "".join(f"line {i:04d}\n" for i in range(800))
    parts = truncate_parts(text, max_chars=1000, keep_head=600, keep_tail=300)
    assert parts.text == smart_truncate(text, max_chars=1000, keep_head=600, keep_tail=300)
    assert _split(parts.text) == (parts.head, parts.omitted, parts.tail)
    assert parts.marker == MARKER.search(parts.text).group(0) and parts.truncated
    assert len(parts.head) + parts.omitted + len(parts.tail) == len(text)
    assert truncate_parts("short", max_chars=10, keep_head=4, keep_tail=4) == Truncation("short", 0, "", "")
    with pytest.raises(ValueError):
        truncate_parts("text", max_chars=100, keep_head=80, keep_tail=30)


def test_original_call_shape_uses_the_original_defaults():
    text = "第一段。\n" * 3000
    out = smart_truncate(text)
    head, omitted, tail = _split(out)
    assert len(head) <= 4000 and len(tail) <= 2000
    assert len(head) + omitted + len(tail) == len(text)


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.sampled_from("ab。\n键k-"), max_size=3000), max_chars=st.integers(40, 7000))
def test_given_only_max_chars_the_cut_marker_included_fits_it(text, max_chars):
    """The truncate plug-in's contract: smart_truncate(text, max_chars) is at most max_chars long, its marker
    included, and still a prefix + exact count + suffix (the executor calls it with two arguments)."""
    out = smart_truncate(text, max_chars)
    assert len(out) <= max_chars
    if out != text:
        head, omitted, tail = _split(out)
        assert text.startswith(head) and text.endswith(tail) and len(head) + omitted + len(tail) == len(text)


def test_the_toolkits_smart_truncate_is_a_working_truncate_plug_in_at_a_small_budget(sim_clock):
    import asyncio

    from toolkit import ToolExecutor

    report = "\n".join(f"第 {i:03d} 笔：键盘 {i % 7} 件" for i in range(300)) + "\n总计：9692"
    result = asyncio.run(ToolExecutor(truncate=smart_truncate, result_max_chars=100).execute(lambda: report, "r"))
    assert result.status == "success" and result.error_code is None
    assert len(result.data) <= 100 and result.data.endswith("总计：9692")


@pytest.mark.parametrize("kwargs", [{"max_chars": -1}, {"keep_head": -1}, {"keep_tail": -5},
                                    {"max_chars": 100, "keep_head": 80, "keep_tail": 30}, {"keep_head": 1.5}])
def test_bad_sizes_raise_value_error_with_advice(kwargs):
    with pytest.raises(ValueError):
        smart_truncate("text", **kwargs)


def test_oversized_keep_message_says_how_to_fix_in_chinese():
    with pytest.raises(ValueError) as caught:
        smart_truncate("text", max_chars=100, keep_head=80, keep_tail=30)
    message = str(caught.value)
    assert "keep_head + keep_tail（80 + 30 = 110）超过了 max_chars（100）" in message
    assert "让两者之和不超过 100" in message and "max_chars 调到至少 110" in message


@pytest.mark.parametrize("kwargs, advice", [({"max_chars": -1}, "max_chars 不能是负数"),
                                            ({"keep_head": 1.5}, "keep_head 应该是整数"),
                                            ({"keep_tail": True}, "keep_tail 应该是整数")])
def test_bad_size_messages_name_the_argument_and_the_fix(kwargs, advice):
    with pytest.raises(ValueError, match=advice) as caught:
        smart_truncate("text", **kwargs)
    assert "请传" in str(caught.value)


def test_non_string_message_says_what_to_use_instead():
    with pytest.raises(TypeError, match="parse_tool_result") as caught:
        smart_truncate(["a"])
    assert "只截断字符串" in str(caught.value) and "shrink_json" in str(caught.value)


@pytest.mark.parametrize("value", [None, 123, b"bytes", ["a"]])
def test_non_string_raises_type_error(value):
    with pytest.raises(TypeError):
        smart_truncate(value)


# --- shrink_json -------------------------------------------------------------------------------------------

def test_values_that_fit_come_back_unchanged():
    value = {"a": [1, 2.5, None, True], "b": {"c": "中文"}}
    assert shrink_json(value) == value


def test_shrink_json_never_exceeds_its_budget():
    value = {"rows": [{"id": i, "text": "t" * 100} for i in range(1000)]}
    for budget in (20, 100, 1000, 5000):
        assert len(dumps(shrink_json(value, budget))) <= budget


def test_values_json_cannot_serialize_become_faithful_text():
    @dataclass
    class Point:
        x: int
        y: int

    value = {"when": dt.datetime(2024, 5, 1, 8, 30), "day": dt.date(2024, 5, 1), "price": decimal.Decimal("19.90"),
             "raw": b"hello", "blob": b"\xff\xfe\x00", "tags": {"b", "a"}, "nan": float("nan"),
             "inf": float("inf"), "id": uuid.UUID(int=1), "path": PurePosixPath("/tmp/x"), "p": Point(1, 2),
             "t": (1, 2)}
    out = shrink_json(value)
    json.loads(dumps(out))
    assert out["when"] == "2024-05-01T08:30:00"
    assert out["day"] == "2024-05-01"
    assert out["price"] == "19.90"
    assert out["raw"] == "hello"
    assert "二进制" in out["blob"] and "3 字节" in out["blob"]
    assert out["tags"] == ["a", "b"]
    assert out["nan"] == "nan" and out["inf"] == "inf"
    assert out["id"] == str(uuid.UUID(int=1))
    assert out["path"] == "/tmp/x"
    assert out["p"] == {"x": 1, "y": 2}
    assert out["t"] == [1, 2]


def test_more_values_become_faithful_text():
    class Color(enum.Enum):
        RED = "红"

    out = shrink_json({"td": dt.timedelta(minutes=1, seconds=30), "time": dt.time(8, 5), "enum": Color.RED,
                       "complex": 1 + 2j})
    assert out == {"td": "90.0s", "time": "08:05:00", "enum": "红", "complex": "(1+2j)"}


def test_sdk_objects_render_through_model_dump():
    message = ChatCompletionMessage(role="assistant", content="你好")
    out = shrink_json({"message": message})
    assert out["message"]["role"] == "assistant" and out["message"]["content"] == "你好"


def test_a_failing_model_dump_falls_back_to_text():
    class Model:
        def model_dump(self):
            raise RuntimeError("broken")

        def __str__(self):
            return "Model(x=1)"

    assert shrink_json([Model()]) == ["Model(x=1)"]


def test_nested_tool_results_render_as_status_and_data():
    value = {"first": ToolResult("a", [1]), "second": PartialResult({"x": 1}, "y")}
    assert shrink_json(value) == {"first": {"status": "success", "result": [1], "error": None},
                                  "second": {"data": {"x": 1}, "missing": "y"}}


def test_successful_tool_result_is_parsed_by_its_data():
    assert json.loads(parse_tool_result(ToolResult("t", {"a": 1}))) == {"a": 1}


def test_long_text_that_only_looks_like_json_is_cut_as_text():
    text = "[not json] " + "word " * 5000
    head, omitted, tail = _split(parse_tool_result(text, max_tokens=200))
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text)


def test_non_string_keys_become_strings():
    assert shrink_json({1: "a", None: "b", (1, 2): "c"}) == {"1": "a", "None": "b", "(1, 2)": "c"}


def test_self_reference_becomes_a_note():
    loop: list = [1]
    loop.append(loop)
    out = shrink_json(loop)
    assert out[0] == 1 and "循环引用" in out[1]


def test_deep_nesting_becomes_a_note():
    deep: list = []
    current = deep
    for _ in range(10_000):
        current.append([])
        current = current[0]
    text = dumps(shrink_json(deep))
    assert "嵌套过深" in text


def test_huge_int_becomes_a_note_with_its_size():
    assert shrink_json(10 ** 5000) == "<约 5001 位的整数>"


def test_objects_whose_str_raises_still_render():
    class Nasty:
        def __str__(self):
            raise RuntimeError("no")

    out = shrink_json({"x": Nasty()})
    assert "Nasty" in out["x"]


def test_lone_surrogates_are_replaced_so_utf8_works():
    out = dumps(shrink_json({"s": "a\ud800b"}))
    out.encode("utf-8")
    assert json.loads(out)["s"].startswith("a")


def test_work_is_bounded_by_the_budget_not_the_input():
    rows = [{"id": i} for i in range(1_000_000)]
    started = time.perf_counter()
    out = shrink_json(rows, 500)
    assert time.perf_counter() - started < 1.0
    assert _left_out(dumps(out))[1] == 1_000_000


def test_shrink_json_refuses_a_non_positive_budget():
    with pytest.raises(ValueError):
        shrink_json({}, 0)


def test_shrink_json_budget_message_says_how_to_fix_in_chinese():
    with pytest.raises(ValueError, match="收到的是 2：请把 max_chars 调到 3 或更大"):
        shrink_json([1, 2, 3], max_chars=2)


# --- helpers --------------------------------------------------------------------------------------------------

def test_estimate_tokens_counts_four_ascii_chars_or_one_cjk_char_per_token():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("中文") == 2
    assert estimate_tokens("ab中") == 2


def test_fit_for_model_reports_whether_anything_was_left_out():
    assert fit_for_model({"a": 1}, 100) == ({"a": 1}, False)
    data, cut = fit_for_model(list(range(1000)), 100)
    assert cut is True and len(dumps(data)) <= 100
