"""check_answer: 回答验收 (chapter 07) — numbers must come from the tool, the key facts must be there,
a failure must be admitted without invented figures."""
from __future__ import annotations

import asyncio
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit import SimulatedClock, TaskContext, ToolExecutor, ToolResult, format_tool_message, use_clock
from toolkit.numbers import numbers_in_text, numbers_in_value
from toolkit.tools import DATA_DIR_ENV, analyze_sales_csv, default_registry, get_weather, search_flights
from toolkit.verify import AnswerCheck, check_answer

ROOT = Path(__file__).resolve().parent.parent
GOOD = "销售额最高的类别是显示器，销售额 4495；总销售额为 9692。其次是键盘 2985，鼠标 2212。"


@pytest.fixture(autouse=True)
def lesson_data(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


@pytest.fixture
def sales() -> dict:
    result = analyze_sales_csv()
    assert result["data"]["total_sales"] == 9692
    return result


@pytest.fixture
def missing(tmp_path, monkeypatch) -> dict:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return analyze_sales_csv()


@pytest.fixture
def bad_line(tmp_path, monkeypatch) -> dict:
    shutil.copy(ROOT / "data" / "faults" / "sales" / "quantity_abc.csv", tmp_path / "sales.csv")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return analyze_sales_csv()


# --- a good answer passes --------------------------------------------------------------

def test_the_seeds_expected_answer_passes(sales):
    check = check_answer(GOOD, sales)
    assert isinstance(check, AnswerCheck)
    assert check.ok and check.mismatches == [] and not check.tool_failed
    assert check.numbers_in_answer == [4495, 9692, 2985, 2212]
    assert check.report().startswith("✔ 回答通过验收")


@pytest.mark.parametrize("answer", [
    "显示器最高（４４９５），总销售额 ９６９２。",
    "显示器销售额最高，为 4,495；总销售额 9,692。",
    "总销售额是9692.00，显示器第一。",
    "总共 5 行数据：显示器销售额最高（4495），合计 9692。",
    "各类别销售额：\n1. 显示器 4495\n2. 键盘 2985\n3. 鼠标 2212\n总计 9692，最高的是显示器。",
])
def test_separators_full_width_digits_and_list_markers_are_understood(answer, sales):
    check = check_answer(answer, sales)
    assert check.ok, check.mismatches


# --- what it must catch -----------------------------------------------------------------

def test_wrong_total_is_caught(sales):
    check = check_answer("销售额最高的是显示器（4495），总销售额为 9792。", sales)
    assert not check.ok
    assert check.unsupported_numbers == [9792]
    assert any("9692" in m for m in check.mismatches)


def test_total_written_as_another_tool_number_is_caught(sales):
    check = check_answer("显示器最高，总销售额 4495。", sales)
    assert not check.ok and check.unsupported_numbers == []
    assert any("总销售额写成了 4495" in m for m in check.mismatches)


def test_wrong_top_category_is_caught_even_when_the_right_one_is_mentioned(sales):
    check = check_answer("销售额最高的是键盘。显示器 4495，总销售额 9692。", sales)
    assert not check.ok
    assert check.mismatches == ["回答说销售额最高的是「键盘」，工具结果是「显示器」"]


def test_missing_top_category_is_caught(sales):
    check = check_answer("总销售额为 9692。", sales)
    assert not check.ok and any("显示器" in m for m in check.mismatches)


def test_invented_number_is_caught(sales):
    check = check_answer(GOOD + "平均每行销售额约 1938。", sales)
    assert not check.ok and check.unsupported_numbers == [1938]
    assert any("1938" in m and "不在工具结果中" in m for m in check.mismatches)


def test_derived_percentage_counts_as_not_from_the_tool(sales):
    """Documented rule: shares the tool did not compute are flagged, even when arithmetically right."""
    assert check_answer(GOOD + "显示器占 46.4%。", sales).unsupported_numbers == [46.4]


def test_numbers_from_the_question_may_be_repeated(sales):
    answer = GOOD + "前 3 名如上。"
    assert not check_answer(answer, sales).ok
    assert check_answer(answer, sales, question="列出前 3 名类别的销售额").ok


# --- failures -------------------------------------------------------------------------------

def test_failure_answer_with_numbers_is_caught(missing):
    check = check_answer("无法读取数据文件，估计总销售额约 9692，显示器最高。", missing)
    assert not check.ok and check.tool_failed
    assert check.unsupported_numbers == [9692]
    assert any("工具失败了" in m and "9692" in m for m in check.mismatches)


def test_failure_not_admitted_is_caught(missing):
    check = check_answer("显示器的销售额最高。", missing)
    assert not check.ok
    assert any("FILE_NOT_FOUND" in m and "没有说明失败" in m for m in check.mismatches)


def test_honest_failure_answer_passes(missing):
    check = check_answer("抱歉，找不到销售数据文件 sales.csv，无法完成统计。", missing)
    assert check.ok, check.mismatches


def test_failure_answer_may_cite_the_bad_line(bad_line):
    assert bad_line["error"]["line"] == 4
    assert check_answer("数据有误：第 4 行的 quantity 是 abc，无法计算。", bad_line).ok
    assert not check_answer("数据有误：第 5 行的 quantity 是 abc，无法计算。", bad_line).ok


# --- other shapes of tool results --------------------------------------------------------------

def _execute(call: dict) -> ToolResult:
    async def go():
        return await ToolExecutor().run_tool_call(call, default_registry())
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(go())


def test_executor_results_are_checked_like_raw_envelopes():
    ok = _execute({"id": "1", "function": {"name": "analyze_sales_csv", "arguments": "{}"}})
    refused = _execute({"id": "2", "function": {"name": "analyze_sales_csv", "arguments": '{"path": "../x.csv"}'}})
    assert check_answer(GOOD, ok).ok
    assert not check_answer(GOOD.replace("9692", "9700"), ok).ok
    assert check_answer("路径不允许，无法读取。", refused).ok
    assert check_answer(GOOD, refused).tool_failed and not check_answer(GOOD, refused).ok


def test_tool_message_content_and_task_context_are_understood(sales, missing):
    content = format_tool_message("analyze_sales_csv", "c1", ToolResult("analyze_sales_csv", sales))["content"]
    assert check_answer(GOOD, content).ok
    context = TaskContext(task="销售分析", steps=["读 CSV", "回答"], done=1)
    failed = format_tool_message("analyze_sales_csv", "c2", missing, task_context=context)["content"]
    assert failed.startswith("[TASK_CONTEXT]")
    assert check_answer(GOOD, failed).tool_failed and not check_answer(GOOD, failed).ok
    assert check_answer("找不到数据文件，无法统计。", failed).ok
    assert check_answer(GOOD, json.dumps(sales, ensure_ascii=False)).ok


def test_weather_answer_generic_numbers():
    weather = get_weather("上海")
    data = weather["data"]
    right = f"上海今天{data['condition']}，最高 {data['temp_c']} 度，湿度 {data['humidity_pct']}%。"
    assert check_answer(right, weather).ok
    wrong = check_answer(f"上海今天{data['condition']}，最高 {data['temp_c'] + 3} 度。", weather)
    assert not wrong.ok and wrong.unsupported_numbers == [data["temp_c"] + 3]


def test_required_fields_can_be_chosen_for_other_tools():
    weather = get_weather("上海")
    assert not check_answer("上海今天天气不错。", weather, required={"temp_c": "气温"}).ok
    assert check_answer(f"上海今天 {weather['data']['temp_c']} 度。", weather, required={"temp_c": "气温"}).ok


def test_two_step_answer_with_one_failed_tool_must_admit_the_failure():
    weather, flights = get_weather("上海"), search_flights("北京", "火星")
    temp = weather["data"]["temp_c"]
    assert not check_answer(f"上海 {temp} 度，航班有 LAB101。", weather, flights).ok
    assert check_answer(f"上海 {temp} 度；航班查询失败：没有火星的数据。", weather, flights).ok


def test_two_step_answer_with_both_tools_ok():
    weather, flights = get_weather("上海"), search_flights("北京", "上海")
    first = flights["data"]["flights"][0]
    answer = (f"上海{weather['data']['condition']}，{weather['data']['temp_c']} 度。"
              f"北京飞上海最早是 {first['flight_no']}，{first['depart']} 起飞，票价 {first['price']} 元。")
    assert check_answer(answer, weather, flights).ok
    assert not check_answer(answer + "另有 LAB999 航班。", weather, flights).ok


def test_rounded_decimals_match_and_negatives_need_their_sign():
    result = {"share_pct": 46.38, "low_c": -3}
    assert check_answer("占 46.4%，最低零下 3 度", result).ok
    assert not check_answer("占 46.5%", result).ok
    assert not check_answer("最低 -4 度", result).ok
    assert check_answer("涨了 3 度", {"delta": 3}).ok
    assert check_answer("变化 -3", {"delta": 3}).unsupported_numbers == [-3]


def test_bad_arguments_raise_value_error(sales):
    with pytest.raises(ValueError, match="str"):
        check_answer(None, sales)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="None"):
        check_answer("答案", None)


# --- properties -----------------------------------------------------------------------------------

def _format(number: int, style: int) -> str:
    if style == 1:
        return f"{number:,}"
    if style == 2:
        return str(number).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    return str(number)


@settings(max_examples=100, deadline=None)
@given(data=st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=3), st.integers(0, 10**9),
                            min_size=1, max_size=6),
       picks=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2)), min_size=1, max_size=6))
def test_an_answer_quoting_only_tool_numbers_has_no_unsupported_numbers(data, picks):
    values = list(data.values())
    quoted = [_format(values[i % len(values)], style) for i, style in picks]
    answer = "结果：" + "，".join(quoted)
    assert check_answer(answer, data).unsupported_numbers == []


@settings(max_examples=100, deadline=None)
@given(data=st.lists(st.integers(0, 10**6), min_size=1, max_size=8), extra=st.integers(0, 10**7))
def test_a_number_absent_from_the_tool_is_always_flagged(data, extra):
    result = {"values": data}
    if extra in numbers_in_value(result):
        return
    check = check_answer(f"结果是 {extra}。", result)
    assert not check.ok and check.unsupported_numbers == [extra]


def test_numbers_in_text_reads_separators_and_full_width():
    assert numbers_in_text("9,692 与 ９６９２，899,199,79 和 2985，2212") == [
        Decimal(9692), Decimal(9692), Decimal(899199), Decimal(79), Decimal(2985), Decimal(2212)]


# --- claims read from what the sentence says (a table of phrasings, right and wrong) ------------------------
# The sales data: 显示器 4495, 键盘 2985, 鼠标 2212; total 9692; 5 rows. A right answer names the top category
# and the total; a wrong one states a wrong total, a wrong top (or bottom) category or a false comparison, in
# whatever words. Each right row says which claims the check must read from it: a right row from which no
# claim is read would pass however wrong it were, so its wrong mirror (test below) would pass too.
# `flag` is a piece of the mismatch the check must report for a wrong one.
# Claims as written by _read_claims: top:/bottom: the names claiming first (last) places, total(of names)
# relation value, and first>second / first<second comparisons.

RIGHT = [
    ("销售额最高的类别是显示器，销售额 4495；总销售额为 9692。", {"top:显示器", "total=9692"}),
    ("显示器卖得最好（4495），三个类别共计 9692。", {"top:显示器", "total=9692"}),
    ("全部加起来一共 9692，其中显示器最高，为 4495。", {"top:显示器", "total=9692"}),
    ("总销售 9692，显示器居首。", {"top:显示器", "total=9692"}),
    ("合计 5 行数据，显示器销售额最高，总额 9692。", {"top:显示器", "total=9692"}),
    ("显示器排名第一；5 行数据的总销售额是 9,692。", {"top:显示器", "total=9,692"}),
    ("最高的是显示器而非键盘，总销售额 9692。", {"top:显示器", "total=9692"}),
    ("最高的不是键盘，而是显示器；总计 9692。", {"top:显示器", "total=9692"}),
    ("最高的不是键盘而是显示器，总计 9692。", {"top:显示器", "total=9692"}),
    ("键盘并不是最高的，显示器才是，总额 9692。", {"top:显示器", "total=9692"}),
    ("显示器、键盘和鼠标三个类别合计 9692，显示器最多。", {"top:显示器", "total(显示器+键盘+鼠标)=9692"}),
    ("总销售额为九千六百九十二，最高的类别是显示器。", {"top:显示器", "total=九千六百九十二"}),
    ("总销售额九千六百九十二元，显示器第一。", {"top:显示器", "total=九千六百九十二"}),
    ("9692 是总销售额，显示器的销售额最高。", {"top:显示器", "total=9692"}),
    ("总销售额超过 4495，达到 9692；显示器最高。", {"top:显示器", "total>4495"}),
    ("总销售额不是 4495，而是 9692，显示器第一。", {"top:显示器", "total!=4495", "total=9692"}),
    ("显示器最高；总销售额在 4495 到 9692 之间，准确地说是 9692。", {"top:显示器", "total range 4495..9692"}),
    ("显示器比键盘高，键盘比鼠标多，总销售额 9692，显示器最高。",
     {"top:显示器", "total=9692", "显示器>键盘", "键盘>鼠标"}),
    ("显示器的销售额高于键盘，总销售额 9692，显示器第一。", {"top:显示器", "total=9692", "显示器>键盘"}),
    ("鼠标最少，显示器最多，总计 9692。", {"bottom:鼠标", "top:显示器", "total=9692"}),
    ("显示器的总销售额为 4495，所有类别的总销售额为 9692，显示器最高。",
     {"top:显示器", "total(显示器)=4495", "total=9692"}),
    ("总销售额约 9692，显示器第一。", {"top:显示器", "total~9692"}),
    ("显示器以 4495 居首，销售总额 9692 元。", {"top:显示器", "total=9692"}),
    ("显示器最高（4,495），合计：9,692。", {"top:显示器", "total=9,692"}),
    ("销售额由高到低：显示器 4495 > 键盘 2985 > 鼠标 2212，总计 9692，最高的是显示器。",
     {"top:显示器", "total=9692", "显示器>键盘", "键盘>鼠标"}),
    ("总计：显示器 4495，键盘 2985，鼠标 2212，合计 9692，显示器最高。", {"top:显示器", "total=9692"}),
    ("显示器和键盘是销售额最高的两个类别，总计 9692。", {"top:显示器+键盘", "total=9692"}),
    ("鼠标不如键盘，键盘没有显示器多，总销售额 9692，显示器最高。",
     {"top:显示器", "total=9692", "鼠标<键盘", "键盘<显示器"}),
    ("显示器最高。总销售额：９６９２。", {"top:显示器", "total=9692"}),
    # other words for the same right claims
    ("排名第一的不是键盘，而是显示器，总销售额 9692。", {"top:显示器", "total=9692"}),
    ("销售额最高的类别：显示器（键盘排第二），总销售额 9692。", {"top:显示器", "total=9692"}),
    ("显示器排第一，键盘排第二，总销售额 9692。", {"top:显示器", "total=9692"}),
    ("显示器卖得比键盘好，总销售额 9692。", {"显示器>键盘", "total=9692"}),
    ("总销售额 9692；显示器 4495、键盘 2985，显示器的销量领先键盘。", {"total=9692", "显示器>键盘"}),
    ("显示器 4495、键盘 2985，其中显示器销售额更高，总销售额 9692。", {"显示器>键盘", "total=9692"}),
    ("显示器较键盘高，总计 9692，显示器最高。", {"显示器>键盘", "total=9692", "top:显示器"}),
    ("显示器最高，其次是键盘，鼠标更少，总计 9692。", {"top:显示器", "鼠标<显示器", "鼠标<键盘", "total=9692"}),
    ("三类商品销量加在一起是 9692，显示器最高。", {"total=9692", "top:显示器"}),
    ("所有类别的销售额之和为 9692，显示器第一。", {"total=9692", "top:显示器"}),
    ("显示器的销售额超过了键盘，总计 9692，显示器最高。", {"显示器>键盘", "total=9692", "top:显示器"}),
]

WRONG = [
    ("三个类别共计 4495，显示器最高。", "总销售额写成了 4495"),
    ("全部加起来一共 2985，显示器最高，总销售额 9692。", "总销售额写成了 2985"),
    ("总销售 4495，显示器最高。", "总销售额写成了 4495"),
    ("最高的是键盘而非显示器，总销售额 9692。", "最高的是「键盘」"),
    ("键盘销售额最高，总销售额 9692，显示器 4495。", "最高的是「键盘」"),
    ("卖得最好的是键盘（2985），总计 9692，显示器 4495。", "最高的是「键盘」"),
    ("排名第一的是鼠标，显示器 4495，总计 9692。", "最高的是「鼠标」"),
    ("显示器并非最高，键盘最高，总计 9692。", "最高的是「键盘」"),
    ("最低的是键盘，显示器最高，总计 9692。", "最低的是「键盘」"),
    ("显示器和鼠标是最高的两类，总计 9692。", "「显示器」「鼠标」"),
    ("总销售额为四千四百九十五，显示器最高。", "总销售额写成了 四千四百九十五"),
    ("总销售额不是 9692，显示器最高。", "总销售额不是 9692"),
    ("总销售额不到 4495，显示器最高，9692 是各类别相加。", "总销售额不到 4495"),
    ("总销售额超过 9692，显示器最高。", "总销售额超过 9692"),
    ("总销售额在 2212 到 4495 之间，显示器最高，9692。", "总销售额在 2212 到 4495 之间"),
    ("总额约 4495，显示器最高，9692。", "总销售额约为 4495"),
    ("合计 4,495，显示器最高，9692。", "总销售额写成了 4,495"),
    ("4495 是总销售额，显示器最高，9692。", "总销售额写成了 4495"),
    ("显示器的总销售额为 2985，总计 9692，显示器最高。", "显示器的销售额写成了 2985"),
    ("显示器、键盘合计 9692，显示器最高。", "显示器、键盘的销售额写成了 9692"),
    ("键盘比显示器高，显示器最高，总计 9692。", "「键盘」的销售额高于「显示器」"),
    ("显示器的销售额低于键盘，显示器最高，总计 9692。", "「显示器」的销售额低于「键盘」"),
    ("键盘没有鼠标多，显示器最高，总计 9692。", "「键盘」的销售额低于「鼠标」"),
    ("显示器最高；销售总额为 9792。", "9792"),
    ("显示器最高，占总销售额的 49%，总销售额 9692。", "49"),
    ("总销售额 96920，显示器最高。", "没有提到总销售额"),
    # a denial answered in the next clause, a name put at another place
    ("排名第一的不是显示器，而是键盘，总销售额 9692。", "最高的是「键盘」"),
    ("显示器并不是最高的，键盘才是，总额 9692。", "最高的是「键盘」"),
    ("最高的不是显示器，而是键盘；总计 9692。", "最高的是「键盘」"),
    ("最高的不是显示器而是键盘，总计 9692。", "最高的是「键盘」"),
    ("销售额最高的类别：键盘（显示器排第二），总销售额 9692。", "最高的是「键盘」"),
    ("键盘排第一，显示器排第二，总销售额 9692。", "最高的是「键盘」"),
    ("最低的不是鼠标，而是键盘，显示器最高，总计 9692。", "最低的是「键盘」"),
    # comparisons in other words
    ("键盘卖得比显示器好，总销售额 9692。", "「键盘」的销售额高于「显示器」"),
    ("总销售额 9692；显示器 4495、键盘 2985，键盘的销量领先显示器。", "「键盘」的销售额高于「显示器」"),
    ("显示器 4495、键盘 2985，其中键盘销售额更高，总销售额 9692。", "「键盘」的销售额高于「显示器」"),
    ("显示器 4495，键盘 2985。键盘销售额更高，总销售额 9692。", "「键盘」的销售额高于「显示器」"),
    ("键盘较显示器高，显示器最高，总计 9692。", "「键盘」的销售额高于「显示器」"),
    ("键盘比显示器卖得好，显示器最高，总计 9692。", "「键盘」的销售额高于「显示器」"),
    ("键盘的销售额超过了显示器，显示器最高，总计 9692。", "「键盘」的销售额高于「显示器」"),
    ("显示器输给了键盘，显示器最高，总计 9692。", "「显示器」的销售额低于「键盘」"),
    ("销售额由高到低：键盘 4495 > 显示器 2985 > 鼠标 2212，总计 9692，最高的是显示器。",
     "「键盘」的销售额高于「显示器」"),
    ("显示器最高，其次是鼠标，键盘更少，总计 9692。", "「键盘」的销售额低于「鼠标」"),
    # totals in other words
    ("三类商品销量加在一起是 4495，显示器最高。", "总销售额写成了 4495"),
    ("所有类别的销售额之和为 2985，显示器最高。", "总销售额写成了 2985"),
    ("总销售额不是 4495，而是 2985，显示器最高。", "总销售额写成了 2985"),
]


def _read_claims(answer: str) -> set[str]:
    """What the claim readers find in an answer about the sales data, written as in RIGHT."""
    from toolkit.claims import comparison_claims, rank_claims, total_claims

    names = ("显示器", "键盘", "鼠标")
    found = {("top:" if c.top else "bottom:") + "+".join(c.names) for c in rank_claims(answer, names)}
    for c in total_claims(answer, names):
        whose = f"({'+'.join(c.names)})" if c.names else ""
        found.add(f"total{whose} range {c.value.text}..{c.upper.text}" if c.upper is not None
                  else f"total{whose}{c.relation}{c.value.text}")
    found |= {f"{c.first}{c.relation}{c.second}" for c in comparison_claims(answer, names)}
    return found


def _mirror(answer: str) -> str:
    """The answer with 显示器 and 键盘 swapped and 9692 and 4495 swapped (in every way the table writes them):
    every claim a right row makes about them becomes false, and every number still comes from the tool."""
    pairs = [("显示器", "键盘"), ("9,692", "4,495"), ("9692", "4495"), ("９６９２", "４４９５"),
             ("九千六百九十二", "四千四百九十五")]
    for i, (a, b) in enumerate(pairs):
        answer = answer.replace(a, f"\0{i}a\0").replace(b, f"\0{i}b\0")
    for i, (a, b) in enumerate(pairs):
        answer = answer.replace(f"\0{i}a\0", b).replace(f"\0{i}b\0", a)
    return answer


@pytest.mark.parametrize("answer, claims", RIGHT, ids=[a for a, _ in RIGHT])
def test_a_right_answer_passes_in_any_of_these_phrasings(answer, claims, sales):
    check = check_answer(answer, sales)
    assert check.ok, check.mismatches
    assert _read_claims(answer) == claims  # it passes because its claims hold, not because none was read


@pytest.mark.parametrize("answer", [a for a, _ in RIGHT], ids=[a for a, _ in RIGHT])
def test_the_wrong_mirror_of_every_right_answer_fails_on_its_claims(answer, sales):
    """With the required facts off, only the claim rules speak: the mirror (top category and total swapped
    with 键盘 and 4495, which the tool also gave) must fail on them."""
    mirror = _mirror(answer)
    assert mirror != answer
    check = check_answer(mirror, sales, required={})
    assert not check.ok and not check.unsupported_numbers, (mirror, check.mismatches)


@pytest.mark.parametrize("answer, flag", WRONG, ids=[a for a, _ in WRONG])
def test_a_wrong_claim_fails_in_any_of_these_phrasings(answer, flag, sales):
    check = check_answer(answer, sales)
    assert not check.ok
    assert any(flag in m for m in check.mismatches), check.mismatches


def test_the_table_is_large_enough_and_says_each_phrasing_once():
    answers = [a for a, _ in RIGHT] + [a for a, _ in WRONG]
    assert len(answers) >= 80 and len(set(answers)) == len(answers)
    assert all(claims for _, claims in RIGHT)


def test_a_percentage_is_a_share_not_a_total(sales):
    """"占总销售额的 46.38%" states a share; when the tool gave it, the answer passes and no total is misread."""
    data = dict(sales["data"], top_share_pct=46.38)
    check = check_answer("显示器最高，占总销售额的 46.4%，总销售额 9692。", data)
    assert check.ok, check.mismatches


def test_a_number_with_a_space_inside_reads_as_two_numbers(sales):
    """Documented: "9 692" is not a thousands separator; the check fails such an answer rather than guess."""
    check = check_answer("显示器最高，总销售额 9 692。", sales)
    assert not check.ok and check.unsupported_numbers == [9, 692]


def test_a_number_is_mentioned_only_as_a_whole_number():
    """A required value is found as a whole number of the answer, never inside a longer one."""
    data = {"code": "4495", "amount": 49}
    assert not check_answer("代码 44950，数量 4495。", data, required={"code": "代码"}).ok
    assert check_answer("代码 4495。", data, required={"code": "代码"}).ok
    assert not check_answer("数量 4495。", {"amount": 49, "other": 4495}, required={"amount": "数量"}).ok


def test_an_answer_rule_that_raises_is_reported_with_a_printable_name(sales):
    from toolkit.knowledge import ToolKnowledge

    class Hostile(Exception):
        def __str__(self):
            raise RuntimeError("no str")

    class Rule:  # a callable object: no __name__ of its own
        def __call__(self, answer, data):
            raise Hostile()
    known = ToolKnowledge(required={"x": "x"}, answer_rules=(Rule(),))
    result = ToolResult("hostile_rules_tool", {"x": 1})
    from toolkit.knowledge import forget, teach
    teach("hostile_rules_tool", known)
    try:
        check = check_answer("x 是 1", result)
    finally:
        forget("hostile_rules_tool")
    assert not check.ok and check.mismatches[0].startswith("答案规则 Rule 出错：Hostile")


@pytest.mark.parametrize("digits", [4300, 4301, 5000, 100_000])
@pytest.mark.parametrize("shape", ["{n}", "总销售额 {n}，显示器最高。", "显示器最高，总销售额 9692，键盘 -{n}.5。",
                                   "显示器 {n}0 最高，总计 9692。", "第 {n} 行，显示器最高，总计 9692。"])
def test_a_number_of_any_length_is_read_and_reported_never_raised(digits, shape, sales):
    """Python refuses str() of an int over 4,300 digits (ValueError): the check reads such a number as text,
    reports it by its first digits, and keeps it as a Decimal; a notebook can print the verdict."""
    answer = shape.format(n="7" * digits)
    check = check_answer(answer, sales)
    assert not check.ok and all(len(m) <= 300 for m in check.mismatches)
    assert any("位数字" in m for m in check.mismatches) if digits > 40 else True
    huge = [n for n in check.numbers_in_answer if isinstance(n, Decimal)]
    assert all(n.adjusted() >= 4300 or float(n) in (float("inf"), float("-inf")) for n in huge)  # only what int
    assert huge or digits == 4300  # and float cannot hold stays a Decimal
    assert "AnswerCheck(ok=False" in repr(check) and check.report().startswith("✘")
