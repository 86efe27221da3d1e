"""Checks each number of the answer with `in` on the tool result's text: 49 is "found" inside 4495.

fails: made_up_substring_fails | 49 不在工具结果里
"""
import json
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def check_sales_answer(answer, tool_results):
    source = json.dumps([[r.data, r.error] for r in tool_results], ensure_ascii=False)
    problems = [f"数字 {n} 没有出处" for n in re.findall(r"\d+", answer.replace(",", "")) if n not in source]
    for r in tool_results:
        data = r.data.get("data", r.data) if isinstance(r.data, dict) else None
        if r.ok and isinstance(data, dict) and "total_sales" in data:
            if data["highest_category"] not in answer:
                problems.append("没有提到销售额最高的类别")
            if str(data["total_sales"]) not in answer.replace(",", ""):
                problems.append("没有给出总销售额")
    if not any(r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明")
    return {"ok": not problems, "problems": problems}
