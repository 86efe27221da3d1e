"""Chapter 06's own checks (toolkit/check/_ch06.py) against the chapter's code: the executor the chapter ends
with passes all of them, each earlier step fails exactly the checks the chapter shows failing, and the usual
slips in the chapter's own class (made by editing its source) each fail the check named for them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolkit.check import get_exercise, run_checks

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "notebooks" / "06_executor.ipynb"
RETRY = {"fatal_not_retried", "sync_tool_runs_once", "transient_retried", "max_retries_are_retries", "waits_jittered",
         "error_envelope_is_an_error"}
BUDGET = {"data_within_budget", "long_list_stays_a_list", "full_output_kept"}
RECORDS = {"history_records_each_call", "history_bounded", "summary_counts_all_calls"}


def definitions() -> str:
    """The chapter's code cells that define a class (imports and classes only, no demo calls)."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells
                       if c["cell_type"] == "code" and re.search(r"^class \w+", "".join(c["source"]), re.M))


def classes(source: str | None = None) -> dict:
    namespace = {"__name__": "chapter_06"}
    exec(compile(source or definitions(), "06_executor.ipynb", "exec", dont_inherit=True), namespace)
    return namespace


def failed(cls) -> set[str]:
    report = run_checks(cls, "ch06")
    assert not [r for r in report.results if r.kind == "error"], report.render()
    return set(report.failed_ids())


def test_the_checks_are_the_three_groups_the_chapter_runs():
    assert {c.id for c in get_exercise("ch06").checks} == RETRY | BUDGET | RECORDS


def test_the_chapters_executor_passes_every_check_and_so_does_the_one_it_plugs_in():
    found = classes()
    assert failed(found["MyExecutor"]) == set()
    assert failed(found["AgentExecutor"]) == set()


@pytest.mark.parametrize("step, fails", [
    ("NaiveToolExecutor", (RETRY - {"transient_retried"}) | BUDGET | {"history_bounded", "summary_counts_all_calls"}),
    ("RetryExecutor", (BUDGET - {"long_list_stays_a_list"}) | RECORDS),
    ("BudgetExecutor", RECORDS),
])
def test_each_earlier_step_fails_exactly_what_the_chapter_says(step, fails):
    assert failed(classes()[step]) == fails


def _mutant(old: str, new: str) -> type:
    source = definitions()
    assert source.count(old) == 1, old
    return classes(source.replace(old, new))["MyExecutor"]


@pytest.mark.parametrize("old, new, fails", [
    ("clock.random.uniform(0, 2 ** (attempt - 1))", "2 ** (attempt - 1)", {"waits_jittered"}),
    ("range(1, self.max_retries + 2)", "range(1, self.max_retries + 1)", {"max_retries_are_retries"}),
    ("if info.retryable and attempt", "if attempt",
     {"fatal_not_retried", "error_envelope_is_an_error", "summary_counts_all_calls"}),
    ("if inspect.isawaitable(value):", "if True:", {"sync_tool_runs_once"}),
    ("info = error_from_envelope(value)", "info = None", {"error_envelope_is_an_error"}),
    ("artifact=result.data)", "artifact=data)", {"full_output_kept"}),
    ("deque(maxlen=history_limit)", "[]", {"history_bounded"}),
    ("shrink_json(result.data, self.result_max_chars)", "str(result.data)[:self.result_max_chars]",
     BUDGET),  # even the short list comes back as text, so it counts as cut
], ids=["no_jitter", "max_retries_as_total", "retries_everything", "awaits_a_sync_result", "envelope_as_success",
        "artifact_is_the_cut", "unbounded_history", "cuts_the_text"])
def test_a_slip_in_the_chapters_class_fails_the_check_named_for_it(old, new, fails):
    assert failed(_mutant(old, new)) == fails


def test_a_summary_counted_from_the_history_fails_only_the_summary_check():
    base = classes()["MyExecutor"]

    class FromHistory(base):
        def get_summary(self):
            total = len(self.call_history)
            return {"total_calls": total, "success_rate": sum(r.ok for r in self.call_history) / max(total, 1),
                    "retries": sum(r.attempts - 1 for r in self.call_history)}

    assert failed(FromHistory) == {"summary_counts_all_calls"}
