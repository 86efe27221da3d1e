"""Numbers as sets of Decimals, the answer split by a helper class; the same three rules, another structure."""
import re
from decimal import Decimal

FAILURE_WORDS = ("失败", "无法", "错误", "找不到", "不存在", "出错", "有误")


class Figures:
    pattern = re.compile(r"\d[\d,]*(?:\.\d+)?")

    def __init__(self):
        self.seen = set()

    def add(self, value):
        if isinstance(value, bool) or value is None:
            return self
        if isinstance(value, (int, float)):
            self.seen.add(Decimal(str(value)).normalize())
        elif isinstance(value, dict):
            for k, v in value.items():
                self.add(k).add(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self.add(v)
        else:
            self.seen |= {Decimal(n.replace(",", "")).normalize() for n in self.pattern.findall(str(value))}
        return self


def check_sales_answer(answer, tool_results):
    known = Figures()
    for r in tool_results:
        known.add(r.data).add(r.error)
    said = Figures().add(answer).seen
    problems = [f"{n} 没有出处（可能是编的）" for n in sorted(said - known.seen)]
    for r in (r for r in tool_results if r.ok):
        data = r.data["data"] if isinstance(r.data, dict) and "status" in r.data and "data" in r.data else r.data
        if isinstance(data, dict) and "total_sales" in data:
            if data["highest_category"] not in answer:
                problems.append("回答没有提到销售额最高的类别")
            if Decimal(str(data["total_sales"])).normalize() not in said:
                problems.append("回答没有给出总销售额")
    if not any(r.ok for r in tool_results) and not any(w in answer for w in FAILURE_WORDS):
        problems.append("工具失败了，回答却没有说明失败")
    return {"ok": not problems, "problems": problems}
