"""Reads numbers with \\d+ and never removes thousands separators: "9,692" becomes 9 and 692.

fails: thousands_separator_ok | 这个回答是对的，却没通过
"""
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def numbers_in(value):
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, (int, float)):
        return {float(value)}
    if isinstance(value, dict):
        return set().union(*(numbers_in(k) | numbers_in(v) for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(numbers_in(v) for v in value)) if value else set()
    return {float(n) for n in re.findall(r"\d+", str(value))}


def check_sales_answer(answer, tool_results):
    allowed = set().union(*(numbers_in(r.data) | numbers_in(r.error) for r in tool_results))
    problems = [f"数字 {n:g} 在工具结果里找不到" for n in sorted(numbers_in(answer) - allowed)]
    for r in tool_results:
        data = r.data.get("data") if isinstance(r.data, dict) and "data" in r.data else r.data
        if r.ok and isinstance(data, dict) and "total_sales" in data:
            if data["highest_category"] not in answer:
                problems.append("没有提到销售额最高的类别")
            if float(data["total_sales"]) not in numbers_in(answer):
                problems.append("没有给出总销售额")
    if not any(r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
