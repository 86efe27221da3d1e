"""Chapter 03's checks judge the chapter's steps as the chapter says: each version of call_tool_with_retry fails
exactly the checks the text after it names, and the last one passes them all."""
from __future__ import annotations

import pytest

from answers.test_ch03_answers import chapter_versions
from toolkit.check import get_exercise, run_checks

STEP_1 = ["success_returns_pair", "transient_errors_retried", "permission_error_not_retried",
          "max_retries_counts_retries"]
WAITS = ["waits_on_clock", "jitter", "retry_after_honoured"]
# (the checks the chapter runs on version n, the ones it says fail); the 轮到你 cells' versions (a placeholder
# raising NotImplementedError where the student writes) fail exactly the checks their cell runs
STEPS = [
    (STEP_1, {"permission_error_not_retried", "max_retries_counts_retries"}),
    (["transient_errors_retried", "permission_error_not_retried"],
     {"transient_errors_retried", "permission_error_not_retried"}),                 # 轮到你 1
    (STEP_1 + ["max_retries_zero", "waits_on_clock"], {"waits_on_clock"}),
    (WAITS, set(WAITS)),                                                            # 轮到你 2
    (WAITS, set()),
    (None, set()),
]


def test_the_chapter_builds_four_versions_and_leaves_two_to_the_student():
    assert len(chapter_versions("call_tool_with_retry")) == len(STEPS)


@pytest.mark.parametrize("step", range(len(STEPS)), ids=lambda n: f"step{n + 1}")
def test_each_step_fails_exactly_the_checks_the_chapter_names(step):
    only, failing = STEPS[step]
    report = run_checks(chapter_versions("call_tool_with_retry")[step], "ch03", only=only)
    assert not [r.id for r in report.results if r.kind == "error"], report.render()
    assert set(report.failed_ids()) == failing, report.render()


def test_the_step_before_the_deadline_fails_only_the_deadline():
    report = run_checks(chapter_versions("call_tool_with_retry")[-2], "ch03")
    assert set(report.failed_ids()) == {"deadline_respected"}, report.render()


def test_the_original_course_code_fails_the_chapters_checks():
    [naive] = chapter_versions("naive_call_tool_with_retry")
    failed = set(run_checks(naive, "ch03").failed_ids())
    assert {"permission_error_not_retried", "max_retries_counts_retries", "max_retries_zero",
            "retry_after_honoured", "sync_tool_works"} <= failed


def test_the_chapter_checks_are_the_retry_checks_under_the_chapter_name():
    chapter = get_exercise("ch03")
    assert chapter.number == "ch03" and chapter.function == "call_tool_with_retry"
    assert {c.id for c in chapter.checks} >= {s for only, _ in STEPS if only for s in only}
