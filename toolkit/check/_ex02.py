"""Exercise 02: truncate_json_rows(text, max_chars) — a JSON array cut by whole items, still JSON, with an exact
"共 N 项，显示前 M 项" note; any other text cut as text (head + tail).

Chapter 02 builds smart_truncate for text; this is the next step, for the query tool whose output is a JSON array:
cutting its text anywhere breaks the JSON and leaves half a record.
"""
from __future__ import annotations

import json
from typing import Any

from ._core import Check, Exercise, Fail, expect
from ._props import property_check

CITIES, CATEGORIES = ("成都", "上海", "北京", "广州", "杭州"), ("键盘", "鼠标", "显示器")
ROWS = [{"order_id": f"SO-{i:04d}", "city": CITIES[i % 5],
         "customer": {"name": f"客户{i % 37:03d}", "level": "VIP" if i % 4 == 0 else "普通"},
         "category": CATEGORIES[i % 3], "amount": (i * 37) % 900 + 100} for i in range(1, 121)]
TEXT = json.dumps(ROWS, ensure_ascii=False)
BUDGETS = (600, 1500, 4000)
HUGE_FIRST = [{"order_id": "SO-0000", "备注": "很长的备注" * 200}] + ROWS[:5]
PRETTY = json.dumps(ROWS[:8], ensure_ascii=False, indent=2)  # over 1000 characters; compact it fits 1000
REPORT = "\n".join(["季度销售报告"] + [f"第 {i:03d} 笔：数量 {i % 7 + 1}" for i in range(1, 201)]
                   + ["结论：销售额最高的类别是显示器（4495）。", "总计：9692"])


def note_for(total: int, shown: int) -> str:
    return f"共 {total} 项，显示前 {shown} 项"


def most_items(items: list, max_chars: int) -> int:
    """How many items json.dumps(..., ensure_ascii=False) fits with the note: the least a right answer keeps."""
    used, shown = 2, 0
    for item in items:
        piece = len(json.dumps(item, ensure_ascii=False)) + 2
        if used + piece + len(json.dumps(note_for(len(items), shown + 1), ensure_ascii=False)) > max_chars:
            break
        used, shown = used + piece, shown + 1
    return shown


def _cut(play: Any, items: list, max_chars: int, text: str | None = None) -> tuple[list, str, str]:
    """(items kept, the note, the output) for a JSON array text that is too long; Fail when it is not that."""
    text = json.dumps(items, ensure_ascii=False) if text is None else text
    out = expect(play(text, max_chars), str)
    try:
        value = json.loads(out)
    except ValueError as exc:
        raise Fail(f"max_chars={max_chars}：结果不是合法的 JSON（{exc}）：…{out[-40:]!r}") from None
    if not isinstance(value, list) or not value or not isinstance(value[-1], str):
        raise Fail(f"max_chars={max_chars}：结果应是一个 JSON 数组，最后一项是说明文字，得到 {out[:40]!r}…")
    return value[:-1], value[-1], out


def check_short(play: Any) -> None:
    for text in ("[]", "[1, 2]", '{"a": 1}', "纯文本", json.dumps(ROWS[:3], ensure_ascii=False)):
        out = play(text, 2000)
        if out != text:
            raise Fail(f"长度不超过 max_chars 的文本应原样返回：输入 {text[:30]!r}，得到 {str(out)[:40]!r}")


def check_valid(play: Any) -> None:
    for max_chars in BUDGETS:
        _cut(play, ROWS, max_chars)


def check_whole(play: Any) -> None:
    for items, max_chars in [(ROWS, b) for b in BUDGETS] + [(HUGE_FIRST, 500)]:
        kept, _, _ = _cut(play, items, max_chars)
        if kept != items[:len(kept)]:
            raise Fail(f"max_chars={max_chars}：说明之前的应是原数组的前 {len(kept)} 项，一项不改、一项不跳"
                       f"（第一项放不下时就一项都不留）；得到的第一项是 {json.dumps(kept[:1], ensure_ascii=False)[:60]}")


def check_note(play: Any) -> None:
    for max_chars in BUDGETS:
        kept, note, _ = _cut(play, ROWS, max_chars)
        if note != note_for(len(ROWS), len(kept)):
            raise Fail(f"max_chars={max_chars}：最后一项应是 {note_for(len(ROWS), len(kept))!r}"
                       f"（共 {len(ROWS)} 项，显示了 {len(kept)} 项），得到 {note[:40]!r}")


def check_budget(play: Any) -> None:
    for items, max_chars in [(ROWS, b) for b in BUDGETS] + [(HUGE_FIRST, 500), (ROWS, 60)]:
        out = expect(play(json.dumps(items, ensure_ascii=False), max_chars), str)
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时结果有 {len(out)} 个字符：说明文字也算在预算里")


def check_chinese(play: Any) -> None:
    out = expect(play(TEXT, 1500), str)
    if "\\u" in out or "成都" not in out:
        raise Fail(f"结果里的中文变成了 \\uXXXX 转义：{out[:50]!r}…。模型读起来费劲，一个字还要占 6 个字符的预算；"
                   "json.dumps 要加 ensure_ascii=False")


def check_fills(play: Any) -> None:
    for items, max_chars, text in [(ROWS, b, None) for b in BUDGETS] + [(ROWS[:8], 1000, PRETTY)]:
        kept, _, _ = _cut(play, items, max_chars, text)
        least = most_items(items, max_chars)
        if len(kept) < least:
            raise Fail(f"max_chars={max_chars}：只保留了 {len(kept)} 项，预算放得下 {least} 项"
                       "（按 json.dumps(..., ensure_ascii=False) 计算，说明也算在内）")


def check_text(play: Any) -> None:
    cases = [(REPORT, 300, "总计：9692"), (json.dumps({"rows": ROWS}, ensure_ascii=False), 600, None),
             (json.dumps("很长的一段文字" * 100, ensure_ascii=False), 200, None), ("[1, 2, 3" + ", 4" * 200, 100, None)]
    for text, max_chars, ending in cases:
        out = expect(play(text, max_chars), str)
        if len(out) > max_chars:
            raise Fail(f"不是 JSON 数组的文本（{text[:20]!r}…）按文字截断，结果也不能超过 max_chars={max_chars}，"
                       f"得到 {len(out)} 字符")
        if ending and ending not in out:
            raise Fail(f"不是 JSON 的报告按文字截断时要保留结尾（「{ending}」），结果的最后是 {out[-30:]!r}")


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    words = st.text(alphabet=st.sampled_from(list("订单客户显示器abc019 ，。\"\\")), max_size=30)
    scalars = st.one_of(st.integers(-10**6, 10**6), words, st.booleans(), st.none())
    items = st.one_of(scalars, st.dictionaries(words, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4))
    big_first = st.tuples(st.text(alphabet=st.sampled_from(list("备注很长ab")), min_size=500, max_size=600),
                          st.lists(items, max_size=10)).map(lambda p: [p[0], *p[1]])  # the first item never fits
    lists = st.one_of(st.lists(items, max_size=3), st.lists(items, min_size=12, max_size=60), big_first)
    cases = st.tuples(lists, st.one_of(st.integers(40, 70), st.integers(70, 400)))

    def classify(case: tuple[list, int]) -> set[str]:
        rows, max_chars = case
        if len(json.dumps(rows, ensure_ascii=False)) <= max_chars:
            return {"不超长"}
        return {"要截断"} | ({"一项都放不下"} if most_items(rows, max_chars) == 0 else set())

    def test(case: tuple[list, int]) -> None:
        rows, max_chars = case
        text = json.dumps(rows, ensure_ascii=False)
        if len(text) <= max_chars:
            if play(text, max_chars) != text:
                raise Fail(f"不超长的文本被改了：{text[:30]!r}")
            return
        kept, note, out = _cut(play, rows, max_chars)
        problems = []
        if len(out) > max_chars:
            problems.append(f"长度 {len(out)} > {max_chars}")
        if kept != rows[:len(kept)]:
            problems.append("保留的不是原数组开头的那几项")
        if note != note_for(len(rows), len(kept)):
            problems.append(f"说明应是 {note_for(len(rows), len(kept))!r}，得到 {note[:30]!r}")
        if len(kept) < most_items(rows, max_chars):
            problems.append(f"只保留了 {len(kept)} 项，放得下 {most_items(rows, max_chars)} 项")
        if problems:
            raise Fail(f"{'；'.join(problems)}（{len(rows)} 项、{len(text)} 字符，max_chars={max_chars}）")

    property_check(cases, test, examples=80, classify=classify, cover={"要截断": 40, "一项都放不下": 4, "不超长": 4})


EXERCISE = Exercise("02", "02_smart_truncate", "截断 JSON 数组：整项保留，仍是合法 JSON，说明共几项", "truncate_json_rows", (
    Check("short_text_unchanged", "不超过 max_chars 的文本原样返回", "先比较 len(text) 和 max_chars", check_short),
    Check("valid_json", "截断后的数组仍是合法 JSON，最后一项是说明文字",
          "不要在文字上切：json.loads 读成列表，取前几项，再 json.dumps 回去", check_valid),
    Check("whole_items", "保留的是原数组开头的若干项，每一项原封不动",
          "按项取：items[:m]；第一项就放不下时 m = 0", check_whole),
    Check("exact_note", "说明文字是「共 N 项，显示前 M 项」，N、M 都准确",
          "N = len(items)，M = 真正保留下来的项数（不含说明本身）", check_note),
    Check("within_budget", "结果（含说明）不超过 max_chars", "每加一项都要算上说明的长度再比较", check_budget),
    Check("chinese_unescaped", "中文原样输出，不变成 \\uXXXX", "json.dumps(..., ensure_ascii=False)", check_chinese),
    Check("fills_budget", "预算放得下的项都放进去（不少于 json.dumps 能放下的项数）",
          "从 0 项开始一项一项加，直到再加一项就超预算；原文有缩进时，重新 dumps 会更短", check_fills),
    Check("text_falls_back", "不是 JSON 数组的文本按文字截断（保留结尾），不抛异常、不超预算",
          "json.loads 失败会抛 ValueError（JSONDecodeError 是它的子类）；读出来不是 list 也按文字处理，"
          "可以用 smart_truncate，给标记留出位置", check_text),
    Check("random_arrays", "随机生成的 80 个 JSON 数组都满足以上规则（hypothesis）",
          "想想空数组、字符串里的引号和反斜杠、一项都放不下的预算", check_random),
))
