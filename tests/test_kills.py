"""A SIGKILL loses nothing that was acknowledged: a writer process and a real ``mama serve``."""

from __future__ import annotations

from pathlib import Path

from mama_plugin.bench.faults import kills_run


def test_killed_writers_and_servers_lose_no_acknowledged_save(tmp_path: Path) -> None:
    _, data = kills_run(3, 1, seed=11, progress=lambda _line: None)
    for kind in ("writer", "server"):
        row = data[kind]
        assert row["acknowledged"] > 0, f"the {kind} trial saved nothing before its kill"
        assert row["lost"] == 0 and row["problems"] == [], row
