"""Chapter 06's own checks (toolkit/check/_ch06.py) against the chapter's code: the executor the chapter ends
with passes all of them, each earlier step fails exactly the checks the chapter shows failing, and the usual
slips in the chapter's own classes (made by editing their source) each fail the check named for them. The classes
are built on the pieces chapters 01-03 save (`chapters_my_toolkit`), as in the chapter."""
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
pytestmark = pytest.mark.usefixtures("chapters_my_toolkit")


def definitions() -> str:
    """The chapter's code cells that define a class or a helper the classes call (imports, classes, functions; their
    check(…) calls left out), not the your-turn cells the student fills in."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]).split("\ncheck(")[0] for c in cells
                       if c["cell_type"] == "code" and "your-turn" not in c["metadata"].get("tags", [])
                       and re.search(r"^(class \w+|def (make_result|fit_to_budget)\()", "".join(c["source"]), re.M))


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
    assert failed(found["RecordingExecutor"]) == set()
    assert failed(found["MyExecutor"]) == set()


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
    ("max_retries=self.max_retries, **kwargs)", "max_retries=self.max_retries - 1, **kwargs)",
     {"max_retries_are_retries"}),
    ("if inspect.isawaitable(value):", "if True:", {"sync_tool_runs_once"}),
    ("info = error_from_envelope(value)", "info = None", {"error_envelope_is_an_error"}),
    ("failures.append(None)", "pass", {"summary_counts_all_calls"}),  # a success is not counted as an attempt
    ("artifact=result.data)", "artifact=shown)", {"full_output_kept"}),
    ("deque(maxlen=history_limit)", "[]", {"history_bounded"}),
    ("return parse(data, limit)", "return str(data)[:limit]", BUDGET),  # even the short list is text now
    ("    if error is not None:", "    if False:",  # a failure made a success: counted as one too
     {"fatal_not_retried", "error_envelope_is_an_error", "summary_counts_all_calls"}),
], ids=["max_retries_one_short", "awaits_a_sync_result", "envelope_as_success", "success_not_counted",
        "artifact_is_the_cut", "unbounded_history", "cuts_the_text", "failure_made_a_success"])
def test_a_slip_in_the_chapters_classes_fails_the_check_named_for_it(old, new, fails):
    assert failed(_mutant(old, new)) == fails


def test_the_retry_is_the_students_own_a_slip_there_fails_the_retry_checks():
    """The executor hands retrying to the student's chapter 03 piece: one that retries everything (the original
    course's bug) fails the checks about it, through the executor."""
    found = classes()

    async def retries_everything(tool_fn, *args, max_retries=3, **kwargs):
        for _ in range(max_retries + 1):
            try:
                return await tool_fn(*args, **kwargs), None
            except Exception as exc:
                error = str(exc)
        return None, error

    class WithIt(found["MyExecutor"]):
        def __init__(self, **settings):
            super().__init__(retry=retries_everything, **settings)

    assert failed(WithIt) == {"fatal_not_retried", "error_envelope_is_an_error", "summary_counts_all_calls",
                              "transient_retried", "waits_jittered"}


def test_a_summary_counted_from_the_history_fails_only_the_summary_check():
    base = classes()["MyExecutor"]

    class FromHistory(base):
        def get_summary(self):
            total = len(self.call_history)
            return {"total_calls": total, "success_rate": sum(r.ok for r in self.call_history) / max(total, 1),
                    "retries": sum(r.attempts - 1 for r in self.call_history)}

    assert failed(FromHistory) == {"summary_counts_all_calls"}
