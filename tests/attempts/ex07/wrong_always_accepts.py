"""Does nothing: accepts every answer. It used to pass the five checks that only ask for an acceptance (5/12); each
of those now also gives a wrong answer next to the right one.

fails: correct_answer_passes | 只放行不够
fails: offline_model_answer_passes | 只放行不够
fails: thousands_separator_ok | 只放行不够
fails: made_up_number_fails | 却通过了
fails: made_up_substring_fails | 却通过了
fails: missing_total_fails | 却通过了
fails: missing_top_category_fails | 却通过了
fails: failure_admitted_passes | 只放行不够
fails: failure_with_numbers_fails | 却通过了
fails: failure_with_invented_number_fails | 却通过了
fails: failure_unsaid_fails | 却通过了
fails: error_numbers_allowed | 只放行不够
fails: one_failure_among_successes | 却通过了
fails: every_tool_failed | 只放行不够
fails: enveloped_data | 只放行不够
"""


def check_sales_answer(answer, results):
    return {"ok": True, "problems": []}
