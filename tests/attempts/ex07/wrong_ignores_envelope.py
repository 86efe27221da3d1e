"""Reads the sales figures from result.data only: when the data is still the tool's {status, data, source, error}
envelope, it finds no figures, so an answer that leaves out the total passes.

fails: enveloped_data | data["data"]
"""
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def numbers(value):
    if isinstance(value, dict):
        return set().union(set(), *(numbers(k) | numbers(v) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return set().union(set(), *(numbers(v) for v in value))
    if value is None or isinstance(value, bool):
        return set()
    return {float(n.replace(",", "")) for n in NUMBER.findall(str(value))}


def check_sales_answer(answer, tool_results):
    allowed = set()
    for r in tool_results:
        allowed |= numbers(r.data) | numbers(r.error)
    said = numbers(answer)
    problems = [f"{n:g} 没有出处" for n in sorted(said - allowed)]
    for r in tool_results:
        if r.ok and isinstance(r.data, dict) and "total_sales" in r.data:
            if r.data["highest_category"] not in answer:
                problems.append("没有提到销售额最高的类别")
            if float(r.data["total_sales"]) not in said:
                problems.append("没有给出总销售额")
    if not any(r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
