"""Shared fixtures: `sim_clock` (simulated time) and `serve` (scripted model servers); nothing autouse."""
from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from toolkit.clock import SimulatedClock, use_clock
from toolkit.llm import OfflineServer, start_offline_server


@pytest.fixture
def sim_clock() -> Iterator[SimulatedClock]:
    """A SimulatedClock(seed=0) installed as the current clock for one test, then the old clock back."""
    with use_clock(SimulatedClock(seed=0)) as clock:
        yield clock


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[dict], Any]], OfflineServer]]:
    """Start scripted model servers (real HTTP on 127.0.0.1) for one test; all stopped afterwards."""
    servers: list[OfflineServer] = []

    def start(script: Callable[[dict], Any]) -> OfflineServer:
        servers.append(start_offline_server(script))
        return servers[-1]
    yield start
    for server in servers:
        server.stop()
        assert server.errors == []  # a script that raised would hide a real failure behind a 500
