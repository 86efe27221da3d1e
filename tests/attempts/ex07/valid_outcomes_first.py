"""Sorts the results into successes and failures first, then applies each rule to the group it is about."""
import re
from fractions import Fraction

WORDS = "失败 无法 错误 找不到 不存在 出错 有误".split()


def figures(value, found=None):
    found = set() if found is None else found
    if isinstance(value, dict):
        for key, item in value.items():
            figures(key, found)
            figures(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            figures(item, found)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        found.add(Fraction(str(value)))
    elif value is not None and not isinstance(value, bool):
        found.update(Fraction(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", str(value)))
    return found


def sales_of(result):
    data = result.data
    while isinstance(data, dict) and {"status", "data"} <= set(data):
        data = data["data"]
    return data if isinstance(data, dict) and "total_sales" in data else None


def check_sales_answer(answer, tool_results):
    succeeded = [r for r in tool_results if r.ok]
    failed = [r for r in tool_results if not r.ok]
    said = figures(answer)
    known = figures([r.data for r in tool_results] + [r.error for r in failed])
    problems = [f"回答里的 {float(n):g} 没有出处" for n in sorted(said - known)]
    for sales in filter(None, map(sales_of, succeeded)):
        if sales["highest_category"] not in answer:
            problems.append(f"没提到最高的类别 {sales['highest_category']}")
        if Fraction(str(sales["total_sales"])) not in said:
            problems.append(f"没给出总销售额 {sales['total_sales']}")
    if tool_results and not succeeded and not any(word in answer for word in WORDS):
        problems.append("工具都失败了，回答没有说明失败")
    return {"ok": not problems, "problems": problems}
