"""Exercise 05: decide_next_step — the chapter's decision tree one step further: call more tools while the task
has a step left (next_step), a result the program broadened (broadened_from) says what its data does not meet, and
a failed step of a multi-step task keeps its action while its suggestion names the step left undone (the toolkit's
evaluate_tool_result does not: delegating to it fails that check)."""
from __future__ import annotations

from typing import Any

from ..results import ToolResult
from . import _ch05 as chapter
from ._core import Check, Exercise, Fail
from ._props import property_check

STEP = "查北京到上海的航班"
WEATHER = ToolResult("get_weather", {"城市": "北京", "天气": "晴"}, truncated=False)
BROADENED = ToolResult("search_orders", [{"order_id": "A0003", "city": "上海", "status": "已完成"},
                                         {"order_id": "A0011", "city": "上海", "status": "已发货"}], truncated=False)


def check_chapter(play: Any) -> None:
    for rule in (chapter.check_partial, chapter.check_partial_missing, chapter.check_retryable, chapter.check_fatal,
                 chapter.check_zero, chapter.check_empty, chapter.check_cut, chapter.check_short):
        rule(play)


CITIES = ("北京", "上海", "广州", "深圳", "成都", "杭州", "西安", "武汉")


def _step(play: Any) -> str:
    """A step left in the task, drawn per run (cities, order number, date), never the task's example (STEP): an
    answer that writes a fixed step it saw in a run, or copied from the task, does not match."""
    while True:
        here, there = play.rng.sample(CITIES, 2)
        step = play.rng.choice((f"查{here}到{there}的航班", f"查订单 A{play.rng.randint(1000, 9999)} 的物流",
                                f"订{there} {play.rng.randint(1, 12)} 月 {play.rng.randint(1, 28)} 日的酒店",
                                f"查{here}明天的天气"))
        if step != STEP:
            return step


def check_more_tools(play: Any) -> None:
    step = _step(play)
    out = chapter.expect_action(play, WEATHER, "call_more_tools", f"成功，但任务还有下一步（{step}）", next_step=step)
    if step not in str(out.get("suggestion", "")):
        raise Fail(f"call_more_tools 的 suggestion 要写出下一步（{step}），模型才知道该调哪个工具，"
                   f"得到 {out.get('suggestion')!r}")


def check_failure_says_left(play: Any) -> None:
    cases = ((ToolResult("get_weather", None, "请求超时", error_type="retryable", error_code="TIMEOUT"), "retry",
              "可重试的失败"),
             (ToolResult("read_file", None, "权限不足", error_type="fatal", error_code="PERMISSION_DENIED"),
              "report_error", "不可重试的失败"))
    for result, action, why in cases:
        step = _step(play)
        out = chapter.expect_action(play, result, action, f"{why}，任务还有下一步（{step}）：动作照旧", next_step=step)
        suggestion = str(out.get("suggestion", ""))
        if step not in suggestion:
            raise Fail(f"{why}，任务还有下一步：{action} 的 suggestion 要写出还没做的那一步（{step}）的原文，"
                       f"模型才会告诉用户任务没做完，得到 {suggestion!r}")
    for result, _action, why in cases:  # no step left (None or ""): nothing is said to be left, both alike
        said = {step: str(chapter.decide(play, result, next_step=step).get("suggestion", "")) for step in (None, "")}
        if "None" in said[None] or said[None] != said[""]:
            raise Fail(f"{why}，任务没有下一步了（next_step=None 或 ''）：suggestion 不该写出一步，两种写法也该一样，"
                       f"得到 None → {said[None]!r}、'' → {said['']!r}：只在 next_step 不为空（if next_step:）时才接上那句话")


def check_last_step(play: Any) -> None:
    for step in (None, ""):
        chapter.expect_action(play, WEATHER, "present_directly", f"next_step={step!r}：任务没有下一步了",
                              next_step=step)


def check_failures_first(play: Any) -> None:
    cases = ((ToolResult("get_weather", None, "请求超时", error_type="retryable"), "retry", "可重试的失败"),
             (ToolResult("get_weather", None, "权限不足", error_type="fatal"), "report_error", "不可重试的失败"),
             (chapter.PARTIAL, "present_partial", "部分成功"),
             (ToolResult("search_orders", []), "retry_with_broader_query", "空结果"))
    for result, action, why in cases:
        chapter.expect_action(play, result, action, f"{why}，哪怕任务还有下一步", next_step=STEP)
    for result, action, why in cases[:3]:
        chapter.expect_action(play, result, action, f"{why}，哪怕是放宽条件后查的", broadened_from={"status": "退款中"})


def check_broadened(play: Any) -> None:
    for dropped in ({"status": "退款中"}, {"status": "退款中", "date": "2026-05-16"}):
        out = chapter.expect_action(play, BROADENED, "present_broadened", f"去掉 {dropped} 后查到的结果",
                                    broadened_from=dropped)
        suggestion = str(out.get("suggestion", ""))
        for key, value in dropped.items():
            if f"{key}={value}" not in suggestion:
                raise Fail(f"suggestion 要写出每个被去掉的条件（{key}={value}），模型才知道数据没显示什么，"
                           f"得到 {suggestion!r}")
        if "不满足" not in suggestion:
            raise Fail(f"suggestion 要说明这些记录「不满足」被去掉的条件，不是原问题要的，得到 {suggestion!r}")


def check_broadened_empty(play: Any) -> None:
    out = chapter.expect_action(play, ToolResult("search_orders", []), "present_broadened",
                                "放宽后仍然为空（不要再放宽一次）", broadened_from={"status": "退款中"})
    if "没有" not in str(out.get("suggestion", "")):
        raise Fail(f"放宽后仍为空：suggestion 要让模型如实告诉用户「没有」结果，得到 {out.get('suggestion')!r}")


def _is_empty(data: Any) -> bool:
    if data is None:
        return True
    if isinstance(data, str):
        return data.strip() in ("", "[]", "{}")
    return isinstance(data, (list, dict)) and len(data) == 0


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    value = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                     max_size=3),
                         max_leaves=8)
    cases = st.tuples(value, st.sampled_from([None, None, None, "fatal", "retryable", "partial"]),
                      st.sampled_from([None, "", STEP, STEP]), st.sampled_from([None, None, {}, {"status": "退款中"}]))

    def want(case: tuple) -> str | None:
        data, kind, step, dropped = case
        if kind:
            return {"retryable": "retry", "fatal": "report_error", "partial": "present_partial"}[kind]
        if dropped:
            return "present_broadened"
        if data == "null":  # text that reads as JSON null: either reading is right
            return None
        return "retry_with_broader_query" if _is_empty(data) else "call_more_tools" if step else "present_directly"

    def classify(case: tuple) -> set[str]:
        return {want(case) or "null"}

    def test(case: tuple) -> None:
        data, kind, step, dropped = case
        result = ToolResult("t", data, None if kind is None else "出错了", error_type=kind,
                            missing="一部分" if kind == "partial" else None, truncated=None if kind else False)
        out = chapter.decide(play, result, next_step=step, broadened_from=dropped)
        if want(case) and out["action"] != want(case):
            raise Fail(f"{result!r}，next_step={step!r}，broadened_from={dropped!r}：应为 {want(case)}，"
                       f"得到 {out['action']}")

    property_check(cases, test, examples=80, classify=classify,
                   cover={"present_directly": 3, "call_more_tools": 3, "present_broadened": 6,
                          "retry_with_broader_query": 2, "retry": 3, "report_error": 3, "present_partial": 3})


EXERCISE = Exercise("05", "05_decisions", "下一步做什么：调用更多工具，说清放宽了什么、还剩什么没做",
                    "decide_next_step", (
    Check("chapter_branches_kept", "第 05 章的分支都还在（部分成功、失败分种类、0 和 False、空、截断过、直接回答）",
          "从你在第 05 章写的 evaluate_tool_result 开始", check_chapter),
    Check("more_tools_when_a_step_is_left", "成功且任务还有下一步 → call_more_tools，suggestion 写出下一步",
          "next_step 不为空时，成功的结果还不够回答", check_more_tools),
    Check("last_step_answers_directly", "没有下一步（None 或空字符串）→ present_directly",
          "用 if next_step:，空字符串不是一步", check_last_step),
    Check("failures_come_first", "失败、部分成功、空结果照旧，哪怕还有下一步或放宽过",
          "新的两支放在失败和部分成功之后", check_failures_first),
    Check("failure_says_what_is_left", "失败且任务还有下一步 → 动作照旧，suggestion 写出没做的那一步（没有下一步就不写）",
          "在失败的两支里把 next_step 接在 suggestion 末尾", check_failure_says_left),
    Check("broadened_says_what_is_not_met", "放宽后的结果 → present_broadened，suggestion 写出去掉的每个条件和「不满足」",
          "遍历 broadened_from.items()，写成 key=value", check_broadened),
    Check("broadened_empty_not_broadened_again", "放宽后仍为空 → present_broadened，告诉用户没有（不再放宽）",
          "broadened_from 的判断放在空结果之前", check_broadened_empty),
    Check("random_results", "随机生成的 80 个结果和参数组合：动作都对（hypothesis）",
          "按任务里的顺序判断", check_random),
))
