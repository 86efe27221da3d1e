"""Exercise 02: truncate_json_rows(text, max_chars) — a JSON array cut like smart_truncate cuts text: whole items
kept at both ends, one note in the middle that says exactly which items were left out; still JSON.

Chapter 01's fit_json keeps the first items of a list (the end is lost); chapter 02's smart_truncate keeps the head
and the tail of a text (and breaks JSON). The exercise is the step that joins them: the head and the tail of an
array, by items, with the left-out range exact ("（省略了第 a 到第 b 项，共 N 项）"), every bit of budget used, and
any other text cut as text with its ending kept (a line without newlines included).
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
HUGE_LAST = ROWS[:5] + [{"order_id": "SO-9999", "备注": "很长的备注" * 200}]
PRETTY = json.dumps(ROWS[:8], ensure_ascii=False, indent=2)  # over 1000 characters; compact it fits 1000
REPORT = "\n".join(["季度销售报告"] + [f"第 {i:03d} 笔：数量 {i % 7 + 1}" for i in range(1, 201)]
                   + ["结论：销售额最高的类别是显示器（4495）。", "总计：9692"])
ONE_LINE = json.dumps({"report": "季度销售", "rows": ROWS[:40], "总计": 9692}, ensure_ascii=False)  # an object, no \n


def note_for(head: int, tail: int, total: int) -> str:
    """The note between the head and the tail: which items (1-based, inclusive) were left out, of how many."""
    return f"（省略了第 {head + 1} 到第 {total - tail} 项，共 {total} 项）"


def render(items: list, head: int, tail: int) -> str:
    """The answer with `head` items at the start and `tail` at the end, as json.dumps writes it by default."""
    if head + tail >= len(items):
        return json.dumps(items, ensure_ascii=False)
    kept = items[:head] + [note_for(head, tail, len(items))] + (items[len(items) - tail:] if tail else [])
    return json.dumps(kept, ensure_ascii=False)


def _fits(items: list, head: int, tail: int, max_chars: int) -> bool:
    return len(render(items, head, tail)) <= max_chars


def split(items: list, out: str, max_chars: int) -> tuple[int, int, str | None]:
    """(head, tail, note) of an answer for the array `items`; Fail when it is not JSON, or not the head of the
    array, a note and its tail (note None: every item kept)."""
    try:
        value = json.loads(out)
    except ValueError as exc:
        raise Fail(f"max_chars={max_chars}：结果不是合法的 JSON（{exc}）：…{out[-40:]!r}") from None
    if not isinstance(value, list):
        raise Fail(f"max_chars={max_chars}：结果应是一个 JSON 数组，得到 {out[:40]!r}…")
    if value == items:
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars}：结果有 {len(out)} 个字符，整个数组原样交了出来，没有截断")
        return len(items), 0, None
    for head in range(len(value) - 1, -1, -1):
        tail = len(value) - head - 1
        if value[:head] == items[:head] and isinstance(value[head], str) and "省略" in value[head] \
                and value[head + 1:] == (items[len(items) - tail:] if tail else []) and head + tail < len(items):
            return head, tail, value[head]
    raise Fail(f"max_chars={max_chars}：结果应是原数组开头的几项、一项说明、原数组结尾的几项（每一项原封不动，"
               f"一项不跳），得到 {out[:60]!r}…")


def _cut(play: Any, items: list, max_chars: int, text: str | None = None) -> tuple[int, int, str | None, str]:
    text = json.dumps(items, ensure_ascii=False) if text is None else text
    out = expect(play(text, max_chars), str)
    return (*split(items, out, max_chars), out)


def _rules(items: list, max_chars: int, head: int, tail: int, note: str | None, out: str) -> list[str]:
    """Every rule a cut array breaks (the random check reports them together)."""
    problems = []
    if len(out) > max_chars:
        problems.append(f"长度 {len(out)} > {max_chars}")
    if note is not None and note != note_for(head, tail, len(items)):
        problems.append(f"说明应是 {note_for(head, tail, len(items))!r}，得到 {note[:40]!r}")
    if _fits(items, 1, 1, max_chars) and (head == 0 or tail == 0) and note is not None:
        problems.append(f"第一项和最后一项一起放得下，却只留了{'结尾' if head == 0 else '开头'}"
                        f"（开头 {head} 项、结尾 {tail} 项）")
    if note is not None and len(out) <= max_chars:
        for more_head, more_tail, where in ((head + 1, tail, "开头"), (head, tail + 1, "结尾")):
            if _fits(items, more_head, more_tail, max_chars):
                problems.append(f"开头 {head} 项、结尾 {tail} 项之外，{where}还放得下一项（预算没用完）")
                break
    return problems


def check_short(play: Any) -> None:
    for text in ("[]", "[1, 2]", '{"a": 1}', "纯文本", json.dumps(ROWS[:3], ensure_ascii=False)):
        out = play(text, 2000)
        if out != text:
            raise Fail(f"长度不超过 max_chars 的文本应原样返回：输入 {text[:30]!r}，得到 {str(out)[:40]!r}")


def check_valid(play: Any) -> None:
    for max_chars in BUDGETS:
        _cut(play, ROWS, max_chars)


def check_both_ends(play: Any) -> None:
    for items, max_chars in [(ROWS, b) for b in BUDGETS] + [(HUGE_FIRST, 500), (HUGE_LAST, 500)]:
        head, tail, note, _ = _cut(play, items, max_chars)
        if note is not None and _fits(items, 1, 1, max_chars) and (head == 0 or tail == 0):
            raise Fail(f"max_chars={max_chars}：第一项和最后一项一起放得下，结果却只留了"
                       f"{'结尾' if head == 0 else '开头'}（开头 {head} 项、结尾 {tail} 项）：最新的记录、合计常在数组的最后")
        if items is HUGE_FIRST and tail == 0 or items is HUGE_LAST and head == 0:
            raise Fail(f"max_chars={max_chars}：{'第一' if items is HUGE_FIRST else '最后一'}项太大放不下，"
                       f"另一头的项放得下，却一项都没留（开头 {head} 项、结尾 {tail} 项）")


def check_note(play: Any) -> None:
    for items, max_chars in [(ROWS, b) for b in BUDGETS] + [(HUGE_FIRST, 500)]:
        head, tail, note, _ = _cut(play, items, max_chars)
        want = note_for(head, tail, len(items))
        if note is not None and note != want:
            raise Fail(f"max_chars={max_chars}：留了开头 {head} 项、结尾 {tail} 项，中间的说明应正好是 {want!r}"
                       f"（第几项从 1 数起），得到 {note[:50]!r}")


def check_budget(play: Any) -> None:
    for items, max_chars in [(ROWS, b) for b in BUDGETS] + [(HUGE_FIRST, 500), (HUGE_LAST, 500), (ROWS, 60)]:
        out = expect(play(json.dumps(items, ensure_ascii=False), max_chars), str)
        if not out.lstrip().startswith("["):  # an answer that does nothing with the array is not "within budget"
            raise Fail(f"max_chars={max_chars}：JSON 数组截断后也应是 JSON 数组，得到 {out[:40]!r}")
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时结果有 {len(out)} 个字符：说明文字也算在预算里")


def check_chinese(play: Any) -> None:
    *_, out = _cut(play, ROWS, 1500, TEXT)
    if "\\u" in out or "成都" not in out:
        raise Fail(f"结果里的中文变成了 \\uXXXX 转义：{out[:50]!r}…。模型读起来费劲，一个字还要占 6 个字符的预算；"
                   "json.dumps 要加 ensure_ascii=False")


def check_fills(play: Any) -> None:
    for items, max_chars, text in [(ROWS, b, None) for b in BUDGETS] + [(ROWS[:8], 1000, PRETTY),
                                                                       (ROWS[:8], 900, PRETTY)]:
        head, tail, note, out = _cut(play, items, max_chars, text)
        if note is None:
            continue
        if len(json.dumps(items, ensure_ascii=False)) <= max_chars:
            raise Fail(f"max_chars={max_chars}：用 json.dumps 重新写出的整个数组放得下（原文有缩进才超长），"
                       "应把全部项原样交出，不加说明")
        for more_head, more_tail, where in ((head + 1, tail, "开头"), (head, tail + 1, "结尾")):
            if _fits(items, more_head, more_tail, max_chars):
                raise Fail(f"max_chars={max_chars}：留了开头 {head} 项、结尾 {tail} 项，{where}再加一项也放得下"
                           "（按 json.dumps(..., ensure_ascii=False) 计算，说明也算在内）：预算没用完")


def check_text(play: Any) -> None:
    cases = [(REPORT, 300), (ONE_LINE, 600), (json.dumps("很长的一段文字" * 100, ensure_ascii=False), 200),
             ("[1, 2, 3" + ", 4" * 200 + ", 5678", 100), ("没有换行的一长段文字。" * 60 + "结尾：总计 9692", 250)]
    for text, max_chars in cases:
        out = expect(play(text, max_chars), str)
        if len(out) > max_chars:
            raise Fail(f"不是 JSON 数组的文本（{text[:20]!r}…）按文字截断，结果也不能超过 max_chars={max_chars}，"
                       f"得到 {len(out)} 字符")
        keep = max(10, max_chars // 8)
        newline = "有换行" if "\n" in text else "没有换行"
        if not text.startswith(out[:keep]) or len(out) < keep:
            raise Fail(f"不是 JSON 数组的文本（{newline}，{text[:20]!r}…）按文字截断时要保留开头，"
                       f"结果的开头是 {out[:30]!r}")
        if not text.endswith(out[-keep:]):
            raise Fail(f"不是 JSON 数组的文本（{newline}，{text[:20]!r}…）按文字截断时要保留结尾"
                       f"（至少最后 {keep} 个字符，结论常在最后），结果的最后是 {out[-30:]!r}，原文的最后是 {text[-30:]!r}")


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    words = st.text(alphabet=st.sampled_from(list("订单客户显示器abc019 ，。\"\\")), max_size=30)
    scalars = st.one_of(st.integers(-10**6, 10**6), words, st.booleans(), st.none())
    items = st.one_of(scalars, st.dictionaries(words, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4))
    big = st.text(alphabet=st.sampled_from(list("备注很长ab")), min_size=500, max_size=600)
    big_first = st.tuples(big, st.lists(items, max_size=10)).map(lambda p: [p[0], *p[1]])  # the first never fits
    big_last = st.tuples(st.lists(items, max_size=10), big).map(lambda p: [*p[0], p[1]])   # nor the last here
    lists = st.one_of(st.lists(items, max_size=3), st.lists(items, min_size=12, max_size=60), big_first, big_last)
    cases = st.tuples(lists, st.one_of(st.integers(40, 70), st.integers(70, 400)))

    def classify(case: tuple[list, int]) -> set[str]:
        rows, max_chars = case
        if len(json.dumps(rows, ensure_ascii=False)) <= max_chars:
            return {"不超长"}
        labels = {"要截断"}
        if _fits(rows, 1, 1, max_chars):
            labels.add("首尾都放得下")
        if not (_fits(rows, 1, 0, max_chars) or _fits(rows, 0, 1, max_chars)):
            labels.add("一项都放不下")
        return labels

    def test(case: tuple[list, int]) -> None:
        rows, max_chars = case
        text = json.dumps(rows, ensure_ascii=False)
        if len(text) <= max_chars:
            if play(text, max_chars) != text:
                raise Fail(f"不超长的文本被改了：{text[:30]!r}")
            return
        head, tail, note, out = _cut(play, rows, max_chars)
        problems = _rules(rows, max_chars, head, tail, note, out)
        if problems:
            raise Fail(f"{'；'.join(problems)}（{len(rows)} 项、{len(text)} 字符，max_chars={max_chars}）")

    property_check(cases, test, examples=100, classify=classify,
                   cover={"要截断": 40, "首尾都放得下": 15, "一项都放不下": 4, "不超长": 4})


EXERCISE = Exercise("02", "02_smart_truncate", "截断 JSON 数组：首尾都留完整的记录，中间写明省略了哪几项",
                    "truncate_json_rows", (
    Check("short_text_unchanged", "不超过 max_chars 的文本原样返回", "先比较 len(text) 和 max_chars", check_short),
    Check("valid_json", "截断后仍是合法的 JSON 数组：开头几项、一项说明、结尾几项",
          "不要在文字上切：json.loads 读成列表，取开头和结尾的几项，中间插入说明，再 json.dumps 回去", check_valid),
    Check("head_and_tail", "开头和结尾都留完整的项（一头放不下时留另一头）",
          "和 smart_truncate 一样留头留尾，只是按项：开头一项、结尾一项轮流加，哪一头放不下就只加另一头",
          check_both_ends),
    Check("exact_note", "中间的说明正好是「（省略了第 a 到第 b 项，共 N 项）」，a、b、N 都准",
          "a = 开头留的项数 + 1，b = N − 结尾留的项数（第几项从 1 数起）", check_note),
    Check("within_budget", "结果（含说明）不超过 max_chars", "每加一项都要算上说明的长度再比较（说明里的数字也会变）",
          check_budget),
    Check("chinese_unescaped", "中文原样输出，不变成 \\uXXXX", "json.dumps(..., ensure_ascii=False)", check_chinese),
    Check("fills_budget", "预算用尽：开头、结尾都再放不下一项；重新写出的整个数组放得下就全部交出",
          "两头都试过放不下才停；原文有缩进时，重新 dumps 会更短", check_fills),
    Check("text_falls_back", "不是 JSON 数组的文本按文字截断，保留开头和结尾（没有换行的文本也一样），不超预算",
          "json.loads 失败会抛 ValueError；读出来不是 list 也按文字处理：toolkit.smart_truncate 给标记留出位置，"
          "自己写时注意 find 找不到换行会返回 -1", check_text),
    Check("random_arrays", "随机生成的 100 个 JSON 数组都满足以上规则（hypothesis）",
          "想想空数组、字符串里的引号和反斜杠、第一项或最后一项太大的数组", check_random),
))
