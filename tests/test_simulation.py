"""toolkit.simulation: the batches, the herd and the course's tools with a fault that panels, charts,
notebooks and the benchmark replay. Same arguments, same records; the environment is never touched."""
from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from toolkit import Backoff
from toolkit.simulation import (SALES_FAULTS, course_tools_with_fault, herd_arrivals, herd_histogram, herd_peaks,
                                scaled_rates, simulate_batch)
from toolkit.tools import DATA_DIR_ENV


def test_a_batch_is_the_same_every_time_and_keeps_every_event():
    first = simulate_batch(rates={"server_error": 0.3, "timeout": 0.1}, calls=30, breaker=True, budget=True, seed=2)
    second = simulate_batch(rates={"server_error": 0.3, "timeout": 0.1}, calls=30, breaker=True, budget=True, seed=2)
    assert [(r.status, r.attempts, r.error_code) for r in first["results"]] == \
        [(r.status, r.attempts, r.error_code) for r in second["results"]]
    kinds = {e.kind for e in first["events"]}
    assert {"attempt_start", "attempt_end", "call_end"} <= kinds
    assert sum(1 for e in first["events"] if e.kind == "call_end") == 30
    assert first["leftover_tasks"] == 0 and first["scaled"] is False


def test_a_batch_runs_from_inside_a_running_event_loop():
    async def handler() -> dict:
        return simulate_batch(rates={"server_error": 0.5}, calls=10, seed=1)
    inside = asyncio.run(handler())
    outside = simulate_batch(rates={"server_error": 0.5}, calls=10, seed=1)
    assert [r.attempts for r in inside["results"]] == [r.attempts for r in outside["results"]]


def test_rates_over_one_are_scaled_to_one():
    assert scaled_rates({"timeout": 0.8, "permission": 0.8, "partial": 0.0}) == \
        ({"timeout": 0.5, "permission": 0.5}, True)
    assert scaled_rates({"timeout": 0.2}) == ({"timeout": 0.2}, False)


def test_herd_arrivals_follow_backoff_schedules():
    arrivals = herd_arrivals(3, retries=2, seed=0)
    expected = []
    for i in range(3):
        a, b = Backoff(jitter="full").schedule(2, seed=i)
        expected += [a, a + b]
    assert arrivals["full"] == sorted(expected)
    assert arrivals["none"] == [1.0, 1.0, 1.0, 3.0, 3.0, 3.0]


def test_herd_peaks_show_what_jitter_spreads():
    peaks = herd_peaks(60, retries=3, bin_ms=100, seed=1)
    assert peaks["none"] == 60  # no jitter: every client retries in the same 100 ms
    assert peaks["full"] < 60 / 2 and peaks["decorrelated"] < 60 / 2
    assert herd_histogram([0.0, 0.05, 0.1, 0.25], 100) == [2, 1, 1]
    with pytest.raises(ValueError):
        herd_peaks(10, bin_ms=0)
    with pytest.raises(ValueError):
        herd_arrivals(0)


@pytest.mark.parametrize("fault, missing, bad", [("missing_file", True, False), ("bad_row", False, True)])
def test_a_data_fault_is_a_temporary_copy_of_the_data_and_the_environment_stays(monkeypatch, fault, missing, bad):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    before = set(Path(tempfile.gettempdir()).glob("toolkit-course-data-*"))
    with course_tools_with_fault(fault) as registry:
        (folder,) = set(Path(tempfile.gettempdir()).glob("toolkit-course-data-*")) - before
        assert DATA_DIR_ENV not in os.environ
        result = registry.get("analyze_sales_csv").fn()  # a sync tool: its envelope says what it found
        assert result["status"] == "error"
        assert result["error"]["code"] == ("FILE_NOT_FOUND" if missing else "INVALID_SALES_CSV")
        assert (folder / "sales.csv").exists() is not missing and (folder / "weather.json").exists()
        if bad:
            assert "abc" in (folder / "sales.csv").read_text(encoding="utf-8")
    assert not folder.exists()  # removed when the block ends


def test_the_tool_faults_wrap_the_sales_tool_only():
    with course_tools_with_fault("timeouts") as registry:
        assert type(registry.get("analyze_sales_csv").fn).__name__ == "FaultyTool"
        assert type(registry.get("get_weather").fn).__name__ != "FaultyTool"
    with pytest.raises(ValueError, match="fault"):
        with course_tools_with_fault("meteor"):
            pass
    assert set(SALES_FAULTS) == {"none", "missing_file", "bad_row", "timeouts", "rate_limited"}
