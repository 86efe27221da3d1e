"""Exercise 07: check_sales_answer — does the model's answer say what the tool computed?

A case is one run's results: "ok", "missing" (FILE_NOT_FOUND), "invalid" (line 4), "enveloped" (the ok result
with its data still in the tool's {status, data, source, error} envelope), or several of them joined by "+"."""
from __future__ import annotations

import dataclasses
from typing import Any

from ._core import Check, Exercise, Fail
from ._plain import describe
from .samples import sales_results


def _verdict(play: Any, answer: str, case: str) -> dict:
    found = sales_results()
    found["enveloped"] = dataclasses.replace(found["ok"], data={"status": "success", "data": found["ok"].data,
                                                                "source": found["ok"].source, "error": None})
    out = play(answer, [found[name] for name in case.split("+")])
    if not isinstance(out, dict) or not isinstance(out.get("ok"), bool) or not isinstance(out.get("problems"), list):
        raise Fail(f"应返回 {{'ok': bool, 'problems': [...]}}，得到 {describe(out)}")
    if out["ok"] and out["problems"]:
        raise Fail(f"ok 为 True 时 problems 应为空，得到 {out['problems']}")
    if not out["ok"] and not out["problems"]:
        raise Fail("不通过时 problems 里要写出原因（中文），现在是空的")
    return out


def _passes(play: Any, answer: str, case: str = "ok", twin: str = "") -> None:
    """`answer` must pass, and its wrong `twin` (one number or word changed) must not: a check that accepts
    everything earns nothing here."""
    out = _verdict(play, answer, case)
    if not out["ok"]:
        raise Fail(f"这个回答是对的，却没通过：{answer!r}；你的 problems：{out['problems']}")
    if twin and _verdict(play, twin, case)["ok"]:
        raise Fail(f"只放行不够：把它改错一处（{twin!r}）也通过了，你的检查是不是什么都放行？")


def _fails(play: Any, answer: str, case: str, why: str, twin: str = "") -> None:
    """`answer` must not pass, and its right `twin` (the mistake taken out) must: a check that rejects
    everything earns nothing here."""
    out = _verdict(play, answer, case)
    if out["ok"]:
        raise Fail(f"{why}，却通过了：{answer!r}")
    if twin:
        out = _verdict(play, twin, case)
        if not out["ok"]:
            raise Fail(f"只拒绝不够：去掉这处错误后（{twin!r}）是对的回答，也没通过（{out['problems']}），"
                       "你的检查是不是什么都拒绝？")


def check_correct(play: Any) -> None:
    _passes(play, "销售额最高的类别是显示器，销售额 4495；总销售额 9692。",
            twin="销售额最高的类别是显示器，销售额 4495；总销售额 9962。")


def check_offline_style(play: Any) -> None:
    _passes(play, "【离线模型】根据工具 analyze_sales_csv 的计算结果：销售额最高的类别是显示器，销售额 4495；"
                "总销售额 9692（共 5 行数据）。各类别销售额从高到低：显示器 4495 > 键盘 2985 > 鼠标 2212。",
            twin="【离线模型】根据工具 analyze_sales_csv 的计算结果：销售额最高的类别是显示器，销售额 4495；"
                 "总销售额 9692（共 5 行数据）。各类别销售额从高到低：显示器 4495 > 键盘 2985 > 鼠标 2221。")


def check_separator(play: Any) -> None:
    _passes(play, "总销售额 9,692，其中显示器最高（4,495）。", twin="总销售额 9,962，其中显示器最高（4,495）。")


def check_made_up(play: Any) -> None:
    _fails(play, "显示器销售额最高（4495），总销售额 9692，比上个月多 1234。", "ok", "1234 不在工具结果里（编造的数字）",
           twin="显示器销售额最高（4495），总销售额 9692。")


def check_missing_total(play: Any) -> None:
    _fails(play, "显示器的销售额最高，为 4495。", "ok", "回答没有给出总销售额 9692",
           twin="显示器的销售额最高，为 4495；总销售额 9692。")


def check_missing_top(play: Any) -> None:
    _fails(play, "总销售额 9692，键盘卖得不错。", "ok", "回答没有说出销售额最高的类别（显示器）",
           twin="总销售额 9692，显示器卖得最好（4495）。")


def check_made_up_substring(play: Any) -> None:
    _fails(play, "销售额最高的类别是显示器（4495），总销售额 9692，环比增长 49%。", "ok",
           "49 不在工具结果里：它只是 4495 的一部分（数字要整个比较，不能在文字里找子串）",
           twin="销售额最高的类别是显示器（4495），总销售额 9692。")
    _fails(play, "显示器最高，4495；总销售额 9692，其中 969 来自线上。", "ok",
           "969 不在工具结果里：它只是 9692 的一部分（数字要整个比较，不能在文字里找子串）")


def check_failure_admitted(play: Any) -> None:
    _passes(play, "分析失败：找不到销售数据文件 sales_2023.csv，所以无法给出销售额。", "missing",
            twin="销售数据文件 sales_2023.csv 已经读取，请稍等。")


def check_failure_hidden(play: Any) -> None:
    _fails(play, "显示器销售额最高，总销售额 9692。", "missing", "工具失败了（FILE_NOT_FOUND），回答却给出了数字",
           twin="分析失败：找不到数据文件，无法给出销售额。")


def check_failure_invented(play: Any) -> None:
    _fails(play, "分析失败：找不到 sales_2023.csv。不过按往年的情况，总销售额大约 9000，显示器卖得最好。", "missing",
           "工具失败了，回答虽然承认失败，却编了一个数字 9000（错误信息里没有）",
           twin="分析失败：找不到 sales_2023.csv，无法给出总销售额。")


def check_failure_unsaid(play: Any) -> None:
    _fails(play, "我看了一下，暂时没有销售数据，你可以稍后再来问。", "missing", "工具失败了，回答没有说明失败",
           twin="我看了一下：找不到销售数据文件，无法回答，你可以稍后再来问。")


def check_error_numbers(play: Any) -> None:
    _passes(play, "数据有误：sales.csv 第 4 行的 quantity 是“abc”，不是整数，无法计算总销售额。", "invalid",
            twin="数据有误：sales.csv 第 7 行的 quantity 是“abc”，不是整数，无法计算总销售额。")


RIGHT = "销售额最高的类别是显示器，销售额 4495；总销售额 9692。"


def check_one_failed_among_successes(play: Any) -> None:
    for case in ("missing+ok", "ok+invalid"):
        out = _verdict(play, RIGHT, case)
        if not out["ok"]:
            raise Fail(f"两个工具一个失败、一个成功（{case}），回答说对了成功的那个，却没通过：{out['problems']}。"
                       "「所有工具都失败」才要求说明失败：是不是用了 any() 而不是 all()，或者只看了第一个 / 最后一个结果？")
        _fails(play, "显示器销售额最高，总销售额 9692，比上月多 1234。", case, "几个结果里都没有 1234（编造的数字）")


def check_every_tool_failed(play: Any) -> None:
    _passes(play, "分析失败：找不到 sales_2023.csv；另一份数据第 4 行的数量有误，无法给出销售额。", "missing+invalid",
            twin="分析失败：找不到 sales_2023.csv；另一份数据第 5 行的数量有误，无法给出销售额。")
    _fails(play, "我看了一下，暂时没有销售数据，你可以稍后再来问。", "missing+invalid", "两个工具都失败了，回答没有说明失败",
           twin="两个工具都失败了：找不到数据文件，无法回答。")


def check_enveloped(play: Any) -> None:
    _passes(play, RIGHT, "enveloped", twin="销售额最高的类别是显示器，销售额 4495；总销售额 9962。")
    _fails(play, "显示器的销售额最高，为 4495。", "enveloped",
           "data 是工具的信封 {status, data, …}，销售数据在 data[\"data\"] 里；回答没有给出总销售额 9692",
           twin="显示器的销售额最高，为 4495；总销售额 9692。")


EXERCISE = Exercise("07", "07_sales_agent", "销售数据 Agent：验收模型的回答", "check_sales_answer", (
    Check("correct_answer_passes", "正确的回答（显示器 4495，总销售额 9692）通过", "数字都来自工具结果，也说了类别和总额",
          check_correct),
    Check("offline_model_answer_passes", "离线模型那样带排名和行数的回答通过", "工具结果里的所有数字（包括各类别、行数）都算有依据",
          check_offline_style),
    Check("thousands_separator_ok", "「9,692」这样带千分位的数字也认", "比较前去掉数字里的逗号", check_separator),
    Check("made_up_number_fails", "编造的数字（1234）不通过", "回答里每个数字都要在工具结果里找得到", check_made_up),
    Check("made_up_substring_fails", "数字按整个数比较：「49%」不因为 4495 里有 49 就算有出处",
          "先把回答和工具结果里的数字都找出来变成数，再比较集合；不要用 in 在文字里找子串", check_made_up_substring),
    Check("missing_total_fails", "没说总销售额的回答不通过", "工具成功时回答必须提到 total_sales", check_missing_total),
    Check("missing_top_category_fails", "没说最高类别的回答不通过", "工具成功时回答必须提到 highest_category",
          check_missing_top),
    Check("failure_admitted_passes", "工具失败时如实说明的回答通过", "失败时只要求说明失败、不编数字", check_failure_admitted),
    Check("failure_with_numbers_fails", "工具失败了回答却给出销售数字：不通过", "失败时回答里的数字只能来自错误信息",
          check_failure_hidden),
    Check("failure_with_invented_number_fails", "工具失败时，回答承认了失败却编了数字：不通过",
          "失败时也要检查数字的出处：只允许错误信息里的数字", check_failure_invented),
    Check("failure_unsaid_fails", "工具失败了回答却没说失败：不通过", "失败时回答要含「失败」「无法」「错误」「找不到」之类的词",
          check_failure_unsaid),
    Check("error_numbers_allowed", "错误信息里的数字（第 4 行）可以出现在回答里", "失败时，错误信息里的数字算有依据",
          check_error_numbers),
    Check("one_failure_among_successes", "几个结果里一个失败、其余成功：说对成功结果的回答通过，编的数字照样不通过",
          "只有所有工具都失败才要求说明失败（all，不是 any）；数字的出处、关键结论看每一个结果", check_one_failed_among_successes),
    Check("every_tool_failed", "几个工具全都失败：如实说明的回答通过，没说失败的不通过",
          "所有结果都失败时要求失败的说法；每个结果的错误信息里的数字都算有依据", check_every_tool_failed),
    Check("enveloped_data", "data 还在工具信封里（data[\"data\"]）时，照样要求最高类别和总销售额",
          "data 里有 \"status\" 和 \"data\" 两个键时，销售数据在 data[\"data\"]", check_enveloped),
))
