"""Uses the toolkit's own pieces: unwrap_envelope opens an envelope (and leaves other data as it is), and
toolkit.numbers reads the figures out of text and JSON; the rules are written out one by one."""
from toolkit.numbers import numbers_in_text, numbers_in_value
from toolkit.results import unwrap_envelope

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


def check_sales_answer(answer, tool_results):
    known = set()
    for r in tool_results:
        known |= set(numbers_in_value(r.data)) | set(numbers_in_value(r.error))
    said = set(numbers_in_text(answer))
    problems = [f"回答里的 {n} 在工具结果里找不到" for n in sorted(said - known)]
    for r in tool_results:
        data, _, _ = unwrap_envelope(r.data)
        if r.ok and isinstance(data, dict) and "total_sales" in data:
            if data["highest_category"] not in answer:
                problems.append(f"没有提到销售额最高的类别 {data['highest_category']}")
            if not set(numbers_in_text(str(data["total_sales"]))) <= said:
                problems.append(f"没有给出总销售额 {data['total_sales']}")
    if all(not r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具都失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
