"""Does nothing: rejects every answer with one vague problem. It used to pass the seven checks that only ask for a
rejection (7/12); each of those now also gives the right answer next to the wrong one.

fails: correct_answer_passes | 这个回答是对的，却没通过
fails: offline_model_answer_passes | 这个回答是对的，却没通过
fails: thousands_separator_ok | 这个回答是对的，却没通过
fails: made_up_number_fails | 只拒绝不够
fails: made_up_substring_fails | 只拒绝不够
fails: missing_total_fails | 只拒绝不够
fails: missing_top_category_fails | 只拒绝不够
fails: failure_admitted_passes | 这个回答是对的，却没通过
fails: failure_with_numbers_fails | 只拒绝不够
fails: failure_with_invented_number_fails | 只拒绝不够
fails: failure_unsaid_fails | 只拒绝不够
fails: error_numbers_allowed | 这个回答是对的，却没通过
fails: one_failure_among_successes | 却没通过
fails: every_tool_failed | 这个回答是对的，却没通过
fails: enveloped_data | 这个回答是对的，却没通过
"""


def check_sales_answer(answer, results):
    return {"ok": False, "problems": ["回答不可信"]}
