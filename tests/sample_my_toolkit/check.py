# 我的工具包：check（接在 run_agent(check=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def check_sales_answer(answer, results):
    """回答里要出现总销售额（假设工具总是成功的：这正是它的 bug）。"""
    total = results[0].data["total_sales"]
    problems = [] if str(total) in answer else [f"回答里没有总销售额 {total}"]
    return {"ok": not problems, "problems": problems}

PIECE = check_sales_answer
