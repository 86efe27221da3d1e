"""Reads every number out of the results' JSON text with word boundaries, instead of walking the values."""
import json
import re

NUMBER = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\d.,])\d+(?:\.\d+)?(?![\d.])")
FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def figures(text):
    return {float(m.replace(",", "")) for m in NUMBER.findall(text)}


def check_sales_answer(answer, tool_results):
    known = figures(json.dumps([[r.data, r.error] for r in tool_results], ensure_ascii=False))
    problems = [f"回答里的 {n:g} 在工具结果里找不到" for n in sorted(figures(answer) - known)]
    for r in tool_results:
        data = r.data
        if isinstance(data, dict) and {"status", "data"} <= data.keys():
            data = data["data"]
        if r.ok and isinstance(data, dict) and "total_sales" in data:
            if str(data["highest_category"]) not in answer:
                problems.append(f"没有提到销售额最高的类别 {data['highest_category']}")
            if float(data["total_sales"]) not in figures(answer):
                problems.append(f"没有给出总销售额 {data['total_sales']}")
    if tool_results and all(not r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具都失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
