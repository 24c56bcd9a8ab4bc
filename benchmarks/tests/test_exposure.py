"""The exposure benchmark: the scripted sessions replayed on the seeded list and on the old one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.exposure import exposure_run
from mama_plugin.config import Config


def test_bench_exposure_on_the_scripted_sessions(mama_home: Path) -> None:
    text, figures = exposure_run(Config(mama_home))
    assert figures["sessions"] >= 40 and set(figures["languages"]) == {"en", "ko"}
    seeded_run = figures["seeded"]
    assert seeded_run["first_request_availability"] == 1.0, seeded_run["misses"]
    assert seeded_run["changes_max"] <= 1
    assert figures["today"]["first_request_availability"] < 1.0  # the trial's failure, replayed
    assert "first-request availability" in text


def test_the_exposure_command_writes_its_figures(
    tmp_path: Path, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exposure.json"
    assert main(["exposure", "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["seeded"]["turns_available"] == figures["turns"]
    assert "today (main)" in capsys.readouterr().out
