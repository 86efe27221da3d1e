"""When the tool failed, only asks for a failure word: an answer that admits failure may invent any figure. It
reads the sales figures from the first result, which is None when a failure comes first.

fails: failure_with_invented_number_fails | 编了一个数字 9000
fails: error_numbers_allowed | 只放行不够
fails: one_failure_among_successes | TypeError
fails: every_tool_failed | 只放行不够
"""
import re

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def numbers(text):
    return {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", str(text))}


def check_sales_answer(answer, tool_results):
    if not any(r.ok for r in tool_results):
        said = any(w in answer for w in FAILURE_WORDS)
        return {"ok": said, "problems": [] if said else ["工具失败了，回答却没有说明失败"]}
    data = tool_results[0].data
    data = data.get("data", data) if "total_sales" not in data else data
    allowed = numbers(data)
    problems = [f"数字 {n:g} 没有出处" for n in sorted(numbers(answer) - allowed)]
    if data["highest_category"] not in answer:
        problems.append("没有提到销售额最高的类别")
    if float(data["total_sales"]) not in numbers(answer):
        problems.append("没有给出总销售额")
    return {"ok": not problems, "problems": problems}
