"""Faults: a SIGKILL loses nothing acknowledged; random calls and garbage never break the server."""

from __future__ import annotations

from pathlib import Path

from benchmarks.faults import kills_run
from benchmarks.fuzz import fuzz_run


def test_killed_writers_and_servers_lose_no_acknowledged_save(tmp_path: Path) -> None:
    _, data = kills_run(3, 1, seed=11, progress=lambda _line: None)
    for kind in ("writer", "server"):
        row = data[kind]
        assert row["acknowledged"] > 0, f"the {kind} trial saved nothing before its kill"
        assert row["lost"] == 0 and row["problems"] == [], row


def test_random_calls_and_garbage_lines_never_break_the_stdio_server() -> None:
    _, data = fuzz_run(300, seed=5, progress=lambda _line: None)
    assert data["calls"] + data["garbage"] >= 300 * 0.95, data
    assert data["garbage"] > 0 and data["calls"] > data["errors"], data  # some saves landed
    assert (data["crashed"], data["hangs"], data["internal"]) == (0, 0, 0), data
    assert data["problems"] == [] and data["exit_code"] == 0, data
