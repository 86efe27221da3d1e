"""Asks for a failure word as soon as any tool failed: with one failure among successes, a right answer is refused
(with a single result, any() and all() agree, so only several results tell them apart).

fails: one_failure_among_successes | 是不是用了 any()
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
    allowed = set().union(set(), *(numbers(r.data) | numbers(r.error) for r in tool_results))
    said = numbers(answer)
    problems = [f"{n:g} 没有出处" for n in sorted(said - allowed)]
    for r in tool_results:
        data = r.data
        if isinstance(data, dict) and "status" in data and "data" in data:
            data = data["data"]
        if r.ok and isinstance(data, dict) and "total_sales" in data:
            if data["highest_category"] not in answer:
                problems.append("没有提到销售额最高的类别")
            if float(data["total_sales"]) not in said:
                problems.append("没有给出总销售额")
    if any(not r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
