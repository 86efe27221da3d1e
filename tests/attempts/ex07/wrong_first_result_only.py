"""Judges the answer by the first result alone, as if a run had one tool call: the figures of a second result
have no source, and a failure listed first hides a success after it.

fails: one_failure_among_successes | 只看了第一个
fails: every_tool_failed | 这个回答是对的，却没通过
"""
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def numbers(value):
    if isinstance(value, dict):
        return set().union(set(), *(numbers(k) | numbers(v) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return set().union(set(), *(numbers(v) for v in value))
    if value is None or isinstance(value, bool):
        return set()
    return {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", str(value))}


def check_sales_answer(answer, tool_results):
    first = tool_results[0]
    said = numbers(answer)
    problems = [f"{n:g} 没有出处" for n in sorted(said - numbers(first.data) - numbers(first.error))]
    if first.ok:
        data = first.data
        if isinstance(data, dict) and "status" in data and "data" in data:
            data = data["data"]
        if data["highest_category"] not in answer:
            problems.append("没有提到销售额最高的类别")
        if float(data["total_sales"]) not in said:
            problems.append("没有给出总销售额")
    elif not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
