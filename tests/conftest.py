"""Shared fixtures: `sim_clock` (simulated time), `serve` (scripted model servers), `ctrl_c` (SIGINT
delivered), `chapters_my_toolkit` (the pieces chapters 01-07 save); nothing autouse."""
from __future__ import annotations

import shutil
import signal
from pathlib import Path
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


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process for one test (and reaches the processes it starts).

    A suite started in the background of a non-interactive shell (`pytest &` in a script) inherits SIGINT
    ignored, and Python keeps it ignored: a test that plays Ctrl-C would then wait for an interrupt that
    never comes (one CI run hung so). The handler before is put back afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture
def chapters_my_toolkit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TOOLKIT_MY_DIR at a copy of what chapters 01-07 save (tests/chapters_my_toolkit), for one test: chapter code
    that reads the earlier chapters' pieces (toolkit.mine.pieces) gets the chapters' own, as under nbval."""
    folder = tmp_path / "my_toolkit"
    shutil.copytree(Path(__file__).resolve().parent / "chapters_my_toolkit", folder,
                    ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(folder))
    return folder
