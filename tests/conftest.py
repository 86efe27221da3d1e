"""Shared fixtures for the test suite: only `sim_clock`, nothing that changes other tests' behaviour."""
from __future__ import annotations

from typing import Iterator

import pytest

from toolkit.clock import SimulatedClock, use_clock


@pytest.fixture
def sim_clock() -> Iterator[SimulatedClock]:
    """A SimulatedClock(seed=0) installed as the current clock for one test, then the old clock back."""
    with use_clock(SimulatedClock(seed=0)) as clock:
        yield clock
