"""Only looks for the total (9692): made-up numbers and a failed tool go unnoticed.

fails: made_up_number_fails | 1234 不在工具结果里
fails: made_up_substring_fails | 49 不在工具结果里
fails: missing_top_category_fails | 没有说出销售额最高的类别
fails: failure_admitted_passes | 这个回答是对的，却没通过
fails: failure_with_numbers_fails | 回答却给出了数字
fails: error_numbers_allowed | 这个回答是对的，却没通过
fails: offline_model_answer_passes | 只放行不够
fails: failure_with_invented_number_fails | 只拒绝不够
fails: failure_unsaid_fails | 只拒绝不够
fails: one_failure_among_successes | 1234
fails: every_tool_failed | 这个回答是对的，却没通过
"""


def check_sales_answer(answer, tool_results):
    ok = "9692" in answer.replace(",", "")
    return {"ok": ok, "problems": [] if ok else ["回答里没有总销售额 9692"]}
