"""Collects only the top-level numeric values of a successful result: the category sales in a nested list
and the numbers in an error message ("第 4 行", "2023") are missed, so honest answers are called made up.

fails: offline_model_answer_passes | 这个回答是对的，却没通过
fails: failure_admitted_passes | 这个回答是对的，却没通过
fails: error_numbers_allowed | 这个回答是对的，却没通过
fails: failure_with_invented_number_fails | 只拒绝不够
fails: every_tool_failed | 这个回答是对的，却没通过
"""
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def check_sales_answer(answer, tool_results):
    allowed = set()
    sales = None
    for r in tool_results:
        if r.ok:
            data = r.data.get("data", r.data) if isinstance(r.data, dict) else {}
            allowed |= {float(v) for v in data.values() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            sales = data
    said = {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", answer)}
    problems = [f"数字 {n:g} 在工具结果里找不到" for n in sorted(said - allowed)]
    if sales is not None:
        if sales["highest_category"] not in answer:
            problems.append("没有提到销售额最高的类别")
        if float(sales["total_sales"]) not in said:
            problems.append("没有给出总销售额")
    elif not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
