"""The first session counts: turns taken while the environment is built are checkpointed later.

While the core environment is not ready the bridge answers the Stop and prompt hooks ``{}``
and records their calls (bootstrap/pending.py); ``mama catchup`` replays them through the Stop
hook's own handler once the core is ready. The SessionStart hook tells the user and the model,
once per install, what is happening. The end-to-end run in the real Claude Code CLI is in
tests/test_claude_code_install.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from test_bootstrap import (  # noqa: F401 (fixtures)
    DEV_VENV,
    SYSTEM_PYTHON,
    _BridgeWire,
    _initialize,
    _launch,
    _log,
    _wait_until,
    data,
    env,
    held_lock,
    plugin,
)

from mama_plugin.bootstrap import notice, paths, pending
from mama_plugin.cli.catchup import catch_up
from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.server.hook_table import TurnArgs, arguments
from mama_plugin.server.hook_tools import do_checkpoint_turn
from mama_plugin.server.state import State
from mama_plugin.storage import Store

TRANSCRIPT = Path(__file__).parent / "fixtures" / "transcripts" / "jwt_to_sessions.jsonl"
LAST = "Benchmarked: p99 41 ms. Next: set up Redis Sentinel. But the failover test is flaky."
LAYERS = ("content", "continuity", "tension", "evidence")


@pytest.fixture
def plugin_data(data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """This process as a plugin's hook or server: CLAUDE_PLUGIN_DATA set."""
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    return data


def _turn(session: str, project: Path, last: str = LAST) -> dict[str, str]:
    return {"session_id": session, "transcript_path": str(TRANSCRIPT),
            "last_assistant_message": last, "cwd": str(project), "stop_hook_active": "false"}  # fmt: skip


def _checkpoints(mama_home: Path, session: str) -> list:
    with Store.open(config=Config(mama_home)) as store:
        return [m for m in store.memories.of_session(session, type="checkpoint")]


def test_the_bridge_records_the_hook_calls_it_cannot_serve(
    plugin: Path,  # noqa: F811
    data: Path,  # noqa: F811
    env: dict[str, str],  # noqa: F811
    tmp_path: Path,
    mama_home: Path,
) -> None:
    env["CLAUDE_PROJECT_DIR"] = str(tmp_path / "project")
    with held_lock(data):  # a bootstrap is "running": not ready
        wire = _BridgeWire(plugin, env, tmp_path)
        try:
            assert "checkpointed" in _initialize(wire, "claude-code")["result"]["instructions"]
            calls = [
                (
                    "observe_prompt",
                    {
                        "prompt": "Write the notes",
                        "session_id": "s1",
                        "transcript_path": "/t.jsonl",
                    },
                ),
                (
                    "checkpoint_turn",
                    _turn("s1", tmp_path) | {"last_assistant_message": "x" * 30_000},
                ),
                ("checkpoint_turn", {"session_id": "", "last_assistant_message": "no session"}),
                ("save_decision", {"topic": "db", "session_id": "s1"}),
            ]
            for name, arguments in calls:
                wire.request("tools/call", {"name": name, "arguments": arguments})
        finally:
            assert wire.close() == ""
        _wait_until(lambda: "holds the lock" in _log(mama_home), "the bridge's bootstrap")
    recorded = data / pending.PENDING
    assert stat.S_IMODE(recorded.stat().st_mode) == 0o600  # prompts are private
    entries, skipped = pending.read(recorded)
    assert skipped == 0 and [e["kind"] for e in entries] == ["prompt", "turn"]
    assert entries[0]["args"] == {"session_id": "s1", "transcript_path": "/t.jsonl",
                                  "prompt": "Write the notes"}  # fmt: skip
    assert entries[1]["args"]["last_assistant_message"] == "x" * 20_000  # clipped as the tool does
    assert {e["project_dir"] for e in entries} == {str(tmp_path / "project")}


def test_catchup_writes_the_checkpoint_the_stop_hook_would_have_once(
    plugin_data: Path, mama_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert (
        pending.record("observe_prompt", {"session_id": "s1", "prompt": "Sessions?"}, str(project))
        is None
    )
    assert pending.record("checkpoint_turn", _turn("s1", project, "Earlier."), str(project)) is None
    with open(pending.pending_path(), "a") as handle:  # a torn write, junk, a foreign object
        handle.write('{"kind": "turn", "args": {"sess\nnot json at all\n[1, 2]\n{"kind": "turn"}\n')
    assert pending.record("checkpoint_turn", _turn("s1", project), str(project)) is None

    done = catch_up(Config(mama_home))
    assert (done["sessions"], len(done["checkpoints"]), done["skipped_lines"]) == (1, 1, 4)
    assert not pending.waiting() and not pending.pending_path().exists()
    [saved] = _checkpoints(mama_home, "s1")

    # Exactly what the Stop hook writes for the same turn, on a store of its own.
    hook = State(Config(mama_home), project_key(project), tmp_path / "hook.db")
    try:
        answer = do_checkpoint_turn(hook.env(), arguments(TurnArgs, _turn("s1", project)))
        direct = hook.store.memories.require(answer.data["checkpoint"])
    finally:
        hook.close()
    assert {k: getattr(saved, k) for k in LAYERS} == {k: getattr(direct, k) for k in LAYERS}
    assert saved.project == direct.project == project_key(project)
    assert "Redis Sentinel" in json.dumps(saved.continuity)

    again = catch_up(Config(mama_home))  # nothing waits: nothing is replayed twice
    assert (again["sessions"], again["checkpoints"]) == (0, [])
    assert [(m.id, m.version) for m in _checkpoints(mama_home, "s1")] == [(saved.id, saved.version)]


def test_catchup_leaves_a_session_the_server_checkpointed_after_the_turn(
    plugin_data: Path, mama_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pending.record("checkpoint_turn", _turn("s1", project, "An old turn."), str(project))
    served = State(Config(mama_home), project_key(project))  # the real server took over
    try:
        do_checkpoint_turn(served.env(), arguments(TurnArgs, _turn("s1", project)))
    finally:
        served.close()
    before = [(m.id, m.version, m.content) for m in _checkpoints(mama_home, "s1")]
    done = catch_up(Config(mama_home))
    assert (done["skipped"], done["checkpoints"]) == (1, [])
    assert [(m.id, m.version, m.content) for m in _checkpoints(mama_home, "s1")] == before


def test_a_killed_catchups_claim_is_replayed_and_one_catchup_runs_at_a_time(
    plugin_data: Path, mama_home: Path, tmp_path: Path
) -> None:
    pending.record("checkpoint_turn", _turn("s1", tmp_path), str(tmp_path))
    claimed = pending.claim()  # then killed before it replayed anything
    assert claimed == pending.claimed_path() and not pending.pending_path().exists()
    pending.record("checkpoint_turn", _turn("s2", tmp_path), str(tmp_path))  # a later turn
    assert pending.waiting()
    with open(plugin_data / "catchup.lock", "ab") as handle:  # another catch-up is running
        fcntl.flock(handle, fcntl.LOCK_EX)
        assert catch_up(Config(mama_home))["busy"] is True
    assert pending.waiting()
    done = catch_up(Config(mama_home))
    assert (done["sessions"], len(done["checkpoints"])) == (2, 2)
    assert not pending.waiting()
    assert [len(_checkpoints(mama_home, s)) for s in ("s1", "s2")] == [1, 1]


def test_a_bridge_that_hands_over_catches_up_the_turns_it_recorded(
    plugin: Path,  # noqa: F811
    data: Path,  # noqa: F811
    env: dict[str, str],  # noqa: F811
    tmp_path: Path,
    mama_home: Path,
) -> None:
    with held_lock(data):  # no bootstrap runs: the test makes the core "ready" itself
        wire = _BridgeWire(plugin, env, tmp_path)
        try:
            _initialize(wire, "claude-code")
            turn = {"name": "checkpoint_turn", "arguments": _turn("s1", tmp_path)}
            assert wire.request("tools/call", turn)["result"]["content"][0]["text"] == "{}"
            assert not _checkpoints(mama_home, "s1")
            venv = data / "venv"  # the core is ready: a data venv running the tests' Python
            (venv / "bin").mkdir(parents=True)
            (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{DEV_VENV}/bin/python" "$@"\n')
            (venv / "bin" / "python").chmod(0o755)
            (venv / paths.CORE_MARKER).write_bytes(paths.CORE_REQUIREMENTS.read_bytes())
            later = {"name": "checkpoint_turn", "arguments": _turn("s2", tmp_path)}
            assert wire.request("tools/call", later)["result"]["content"][0]["text"] == "{}"
            assert len(_checkpoints(mama_home, "s2")) == 1  # the real server answered this one
            _wait_until(lambda: bool(_checkpoints(mama_home, "s1")), "the hand-over's catch-up",
                        timeout=120)  # fmt: skip
        finally:
            errors = wire.close()
        assert "Traceback" not in errors, errors
    _wait_until(lambda: "mama catchup: 1 session(s), 1 checkpoint(s) saved" in _log(mama_home),
                "the catch-up's report")  # fmt: skip
    assert not (data / pending.PENDING).exists() and not (data / pending.CLAIMED).exists()


def test_a_turn_whose_replay_fails_is_kept_for_the_next_catchup_then_dropped(
    plugin_data: Path, mama_home: Path, tmp_path: Path
) -> None:
    pending.record("checkpoint_turn", _turn("s1", tmp_path), str(tmp_path))
    not_a_database = tmp_path / "a folder"
    not_a_database.mkdir()
    for tries in (1, 2):
        done = catch_up(Config(mama_home), not_a_database)
        assert (done["failed"], done["checkpoints"]) == (1, [])
        [kept], _ = pending.read(pending.pending_path())
        assert kept["tries"] == tries and kept["args"]["session_id"] == "s1"
    assert catch_up(Config(mama_home), not_a_database)["failed"] == 1
    assert not pending.waiting()  # given up after three tries: nothing loops forever


def test_the_bin_mama_catchup_command_and_its_json(
    plugin_data: Path, mama_home: Path, tmp_path: Path
) -> None:
    pending.record("checkpoint_turn", _turn("s1", tmp_path), str(tmp_path))
    run = subprocess.run([str(DEV_VENV / "bin" / "python"), "-m", "mama_plugin.cli", "catchup", "--json"],
                         capture_output=True, text=True, timeout=120, env=os.environ)  # fmt: skip
    assert run.returncode == 0, run.stderr
    done = json.loads(run.stdout)
    assert (done["sessions"], len(done["checkpoints"]), done["failed"]) == (1, 1, 0)


def test_the_session_start_notice_is_shown_once_per_install(
    plugin: Path,  # noqa: F811
    data: Path,  # noqa: F811
    env: dict[str, str],  # noqa: F811
    mama_home: Path,
) -> None:
    with held_lock(data):  # not ready for the whole test
        first = _launch(plugin, "mama-hook", env, "session-start", stdin='{"source": "startup"}')
        second = _launch(plugin, "mama-hook", env, "session-start", stdin='{"source": "startup"}')
        (data / notice.MARKER).write_text("an older requirements digest\n")  # a plugin update
        updated = _launch(plugin, "mama-hook", env, "session-start", stdin='{"source": "startup"}')
        _wait_until(lambda: _log(mama_home).count("holds the lock") == 3, "the hooks' bootstraps")
    assert (first.returncode, first.stderr, second.returncode, second.stdout) == (0, "", 0, "")
    said = json.loads(first.stdout)
    assert said == json.loads(updated.stdout)
    assert "installing its Python environment" in said["systemMessage"]
    assert str(mama_home / "logs" / "bootstrap.log") in said["systemMessage"]
    assert said["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = said["hookSpecificOutput"]["additionalContext"]
    assert "not ready yet" in context and "checkpointed automatically" in context


def test_with_the_core_ready_the_session_start_hook_catches_up(
    plugin: Path,  # noqa: F811
    plugin_data: Path,
    env: dict[str, str],  # noqa: F811
    mama_home: Path,
    tmp_path: Path,
) -> None:
    env["MAMA_VENV"] = str(DEV_VENV)  # an environment is ready
    pending.record("checkpoint_turn", _turn("s1", tmp_path), str(tmp_path))
    hook = _launch(plugin, "mama-hook", env, "session-start", stdin="{}")
    assert (hook.returncode, hook.stdout) == (0, "")
    _wait_until(lambda: "mama catchup: 1 session(s), 1 checkpoint(s) saved" in _log(mama_home),
                "the hook's catch-up", timeout=120)  # fmt: skip
    assert len(_checkpoints(mama_home, "s1")) == 1
    assert not (plugin_data / pending.PENDING).exists()


def test_bin_mama_with_no_environment_anywhere_builds_one_and_prints_only_its_output(
    plugin: Path,  # noqa: F811
    env: dict[str, str],  # noqa: F811
    mama_home: Path,
) -> None:
    """A terminal before any session: no CLAUDE_PLUGIN_DATA and nothing recorded."""
    terminal = {k: v for k, v in env.items() if k != "CLAUDE_PLUGIN_DATA"}
    terminal["MAMA_BOOTSTRAP_LOCAL"] = "0"
    ran = _launch(plugin, "mama", terminal, "config", "list")
    assert ran.returncode == 0, ran.stderr + _log(mama_home)
    listing = subprocess.run([str(DEV_VENV / "bin" / "python"), "-m", "mama_plugin.cli", "config", "list"],
                             capture_output=True, text=True, env={**terminal, "PYTHONPATH": str(plugin)},
                             check=True).stdout  # fmt: skip
    assert ran.stdout == listing  # the listing, and nothing else
    assert "preparing MAMA's Python environment" in ran.stderr  # the progress went to stderr
    assert paths.CORE_MARKER in os.listdir(mama_home / "plugin-env" / "venv")
