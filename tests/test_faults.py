"""Degrade, never die: private files, a read-only home, any config.json, a full disk, logs.

Each fault is made for real where the machine allows it: permission bits under umask 022, a
read-only home (as root, the process runs without the capabilities that ignore permission
bits), config files of any bytes, SQLite's own "database or disk is full" (``max_page_count``)
and ENOSPC from ``/dev/full``. The real MCP front is driven over stdio for the read-only home
and a config that is not UTF-8.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_front import FRONT, _call, _initialize
from test_stdio import Wire

from mama_plugin import logs
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import ConfigError, StoreFull
from mama_plugin.project import project_key
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.settings import KEYS, Settings
from mama_plugin.storage import Store
from mama_plugin.storage.backup import back_up

ROOT = Path(__file__).resolve().parent.parent
DECISION = {
    "topic": "cache_tier",
    "decision": "Keep the session cache in Redis",
    "reasoning": "p99 41 ms at 10K req/s where Postgres gave 307 ms",
}
DROP = "-dac_override,-dac_read_search,-fowner"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def held_to_permissions(command: list[str]) -> list[str]:
    """``command`` run where permission bits hold: as root, without the capabilities that
    bypass them (CAP_DAC_OVERRIDE…), else as it is."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to hold")
    return [setpriv, f"--bounding-set={DROP}", f"--inh-caps={DROP}", *command]


@pytest.fixture
def read_only_home(mama_home: Path, tmp_path: Path) -> Iterator[Path]:
    """A home with one saved decision for the project ``tmp_path``, then made read-only."""
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, project_key(str(tmp_path)), DECISION)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    for path in (mama_home, *mama_home.rglob("*")):
        path.chmod(0o500 if path.is_dir() else 0o400)
    yield mama_home
    for path in (mama_home, *mama_home.rglob("*")):
        path.chmod(0o700 if path.is_dir() else 0o600)


def mama(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MAMA_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        held_to_permissions([sys.executable, "-m", "mama_plugin.cli", *args]),
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, input=stdin,
    )  # fmt: skip


# -- private files ---------------------------------------------------------------------------


def test_every_file_mama_writes_is_private_under_umask_022(
    mama_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert os.umask(0o022) == 0o022  # the fixture's, as most systems have it
    Config(mama_home).set("busy_timeout_ms", "4000")
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, "/p", DECISION)
        backup = back_up(store, "test")
        live = [mama_home / "mama.db", mama_home / "mama.db-wal", mama_home / "mama.db-shm"]
        assert all(p.exists() for p in live)
        logs.append("hooks", "a line")
        assert main(["export", "-o", str(tmp_path / "export.json")]) == 0
        files = [*live, backup, mama_home / "config.json", logs.log_path("hooks")]
        for path in [*files, tmp_path / "export.json"]:
            assert mode(path) == 0o600, f"{path} is {oct(mode(path))}"
    for folder in (mama_home, mama_home / "backups", mama_home / "logs"):
        assert mode(folder) == 0o700, f"{folder} is {oct(mode(folder))}"


def test_an_install_made_before_is_put_right_when_mama_next_runs(mama_home: Path) -> None:
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, "/p", DECISION)
        back_up(store, "test")
        logs.append("server", "a line")
        everything = [mama_home, *mama_home.rglob("*")]
        for path in everything:  # what umask 022 made before this rule
            path.chmod(0o755 if path.is_dir() else 0o644)
        assert main(["status"]) == 0
    for path in everything:
        if path.exists():
            want = 0o700 if path.is_dir() else 0o600
            assert mode(path) == want, f"{path} is {oct(mode(path))}"


def test_the_server_writes_private_files_under_umask_022(mama_home: Path, tmp_path: Path) -> None:
    wire = Wire(mama_home, tmp_path, [*FRONT, "--project", str(tmp_path)])
    try:
        _initialize(wire, "claude-code")
        assert not _call(wire, "save_decision", DECISION)["isError"]
        found = [mama_home / n for n in ("mama.db", "mama.db-wal", "mama.db-shm")]
        found.append(mama_home / "logs" / "server.log")
        assert {p.name: oct(mode(p)) for p in found} == {p.name: "0o600" for p in found}
        assert mode(mama_home) == mode(mama_home / "logs") == 0o700
    finally:
        wire.close()


# -- a read-only home ------------------------------------------------------------------------


def test_the_server_runs_read_only_in_a_read_only_home(
    read_only_home: Path, tmp_path: Path
) -> None:
    """It used to die at start (it could not create logs/): now it reads and says why it
    cannot save."""
    command = held_to_permissions([*FRONT, "--project", str(tmp_path)])
    wire = Wire(read_only_home, tmp_path, command)
    try:
        assert "result" in _initialize(wire, "claude-code")
        assert wire.request("tools/list")["result"]["tools"]
        saved = _call(wire, "save_decision", {**DECISION, "topic": "another"})
        said = saved["content"][0]["text"]
        assert saved["isError"] and said.startswith("save_decision: MAMA's memory store ")
        assert "is read-only" in said and "searching and recall still work" in said
        assert f"make {read_only_home} writable" in said
        found = _call(wire, "search_by_context", {"query": "session cache Redis"})
        assert not found["isError"] and "Keep the session cache in Redis" in str(found)
    finally:
        errors = wire.close()
    assert "server.log cannot be written" in errors and "logging to stderr" in errors
    assert not (read_only_home / "logs").exists()


def test_the_cli_reads_a_read_only_home_and_refuses_writes_with_the_fix(
    read_only_home: Path,
) -> None:
    found = mama(read_only_home, "search", "session cache", "--keyword-only", "--project", "/")
    assert found.returncode == 0, found.stderr
    changed = mama(read_only_home, "config", "set", "busy_timeout_ms", "100")
    assert changed.returncode == 1 and "Traceback" not in changed.stderr
    assert changed.stderr.startswith(f"mama: error: cannot write {read_only_home}/config.json")
    assert "nothing was changed" in changed.stderr
    doctor = mama(read_only_home, "doctor")
    assert doctor.returncode == 0 and "integrity  ok" in doctor.stdout
    assert "writable   no (Permission denied): MAMA reads it but saves nothing" in doctor.stdout


def test_session_start_recalls_and_says_nothing_can_be_saved(
    read_only_home: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "MAMA_HOME": str(read_only_home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        held_to_permissions([sys.executable, "-m", "mama_plugin.hooks", "session-start"]),
        input=json.dumps({"cwd": str(tmp_path), "source": "startup"}),
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    said = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Keep the session cache in Redis" in said
    assert "is read-only: memories can be recalled but not saved" in said


# -- config.json of any content --------------------------------------------------------------


def test_the_server_starts_on_a_config_that_is_not_utf8(mama_home: Path, tmp_path: Path) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_bytes(b'{"busy_timeout_ms": "\xff\xfe 900"}')
    wire = Wire(mama_home, tmp_path, [*FRONT, "--project", str(tmp_path)])
    try:
        assert "result" in _initialize(wire, "claude-code")
        assert not _call(wire, "save_decision", DECISION)["isError"]
    finally:
        wire.close()
    log = (mama_home / "logs" / "server.log").read_text()
    assert "config.json is not UTF-8 text (byte 0xff at offset 21)" in log


def test_session_start_surfaces_a_config_it_could_not_use(mama_home: Path) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_bytes(b"\x80\x81 not text")
    env = {**os.environ, "MAMA_HOME": str(mama_home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "mama_plugin.hooks", "session-start"],
        input="{}", capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    said = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said.startswith("MAMA's settings could not all be used: ")
    assert "is not UTF-8 text" in said and "`mama config list`" in said
    assert "is not UTF-8 text" in (mama_home / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\xff\xfe{}", "is not UTF-8 text (byte 0xff at offset 0)"),
        (b"[1, 2]", "must hold a JSON object of key: value, not a list"),
        (b"[" * 100_000, "cannot be read as JSON"),
        (b'{"db_path": null}', "config db_path=None in "),
        (b'{"embedding_dim": 1' + b"0" * 5000 + b"}", "cannot be read as JSON"),
    ],
)
def test_the_cli_names_what_is_wrong_with_the_config_without_a_traceback(
    mama_home: Path, capsys: pytest.CaptureFixture[str], content: bytes, said: str
) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_bytes(content)
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mama: error: ") and said in err and "Traceback" not in err
    lenient = Config(mama_home, strict=False)
    assert lenient.settings == Settings() and lenient.problems and lenient.notice


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.binary(max_size=60)
    | st.dictionaries(st.sampled_from(sorted(KEYS)), JSON).map(lambda d: json.dumps(d).encode())
)
def test_any_config_content_gives_settings_or_a_config_error(raw: bytes) -> None:
    home = Path(tempfile.mkdtemp(prefix="mama-config-"))
    (home / "config.json").write_bytes(raw)
    lenient = Config(home, strict=False)
    typed = lenient.settings  # never raises
    assert isinstance(typed.db_path, str) and typed.db_path != "None"
    assert bool(lenient.problems) == bool(lenient.notice)
    try:
        assert Config(home).settings == typed  # strict: the same values, or what to fix
    except ConfigError as exc:
        assert str(exc) and lenient.problems
    finally:
        shutil.rmtree(home)


# -- a full disk -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_full_disk_is_said_in_the_tool_answer(mama_home: Path, tmp_path: Path) -> None:
    from mama_plugin.server import dispatch
    from mama_plugin.server.state import State

    served = State(Config(mama_home), "/p", tmp_path / "full.db")
    store = served.store
    opened = store._connect  # every tool runs on a worker thread's own connection: fill each

    def full(db: Path, timeout: int) -> apsw.Connection:
        conn = opened(db, timeout)
        fill(conn)
        return conn

    store._connect = full  # type: ignore[method-assign]
    try:
        fill(store.conn)
        reply = await dispatch.call(served, "save_decision", BIG, client="claude-code")
        found = await dispatch.call(served, "search_by_context", {"query": "Redis"}, client=None)
    finally:
        served.close()
    assert reply.is_error and reply.text.startswith("save_decision: the disk holding MAMA's ")
    assert "is full: nothing was saved" in reply.text and "server.log" not in reply.text
    assert not found.is_error


# A memory over one page long: saving it must add pages (an overflow chain at least).
BIG = {**DECISION, "topic": "big", "decision": "Keep it in Redis " * 110, "reasoning": "z " * 990}


def fill(conn: apsw.Connection) -> None:
    """Let the database grow by no page from now on (SQLite's "database or disk is full")."""
    pages = conn.execute("PRAGMA page_count").fetchall()[0][0]
    conn.execute(f"PRAGMA max_page_count = {pages}").fetchall()


def test_a_save_on_a_full_disk_raises_store_full_and_keeps_what_was_saved(store: Store) -> None:
    kept = save_decision(store, "/p", DECISION).memory.id
    fill(store.conn)
    with pytest.raises(StoreFull, match=r"df -h") as raised:
        save_decision(store, "/p", BIG)
    assert str(raised.value).startswith(f"the disk holding MAMA's memory store {store.path} is ")
    assert [m.id for m in store.memories.recent(project="/p", limit=5)] == [kept]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (needs the right to mount: root here, skipped elsewhere)."""
    disk = tmp_path / "tiny"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here: {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def test_the_real_front_says_the_disk_is_full(tiny_disk: Path, tmp_path: Path) -> None:
    """ENOSPC for real: the database and the log on a full tmpfs."""
    home = tiny_disk / "home"
    with Store.open(config=Config(home)) as store:
        save_decision(store, "/p", DECISION)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    wire = Wire(home, tmp_path, [*FRONT, "--project", str(tmp_path)])
    try:
        _initialize(wire, "claude-code")
        assert "result" in wire.request("tools/list")
        # Unbuffered, and the suppress outermost: closing must not flush what did not fit.
        with contextlib.suppress(OSError), open(tiny_disk / "filler", "wb", buffering=0) as filler:
            while True:  # now fill the disk
                filler.write(b"\0" * 65536)
        answers = [_call(wire, "save_decision", {**BIG, "topic": f"t{i}"}) for i in range(3)]
    finally:
        wire.close()
    said = [a["content"][0]["text"] for a in answers if a["isError"]]
    assert said, answers
    assert all(f"the disk holding MAMA's memory store {home}/mama.db is full" in t for t in said)
    assert all("server.log" not in t for t in said)


@pytest.mark.anyio
async def test_an_error_whose_log_cannot_be_written_says_where_it_went(
    mama_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.server import dispatch
    from mama_plugin.server.base import Answer
    from mama_plugin.server.state import State
    from mama_plugin.server.tool_table import BY_NAME

    def broken(*_: object) -> Answer:
        raise RuntimeError("a bug")

    (mama_home / "logs").mkdir(parents=True)
    (mama_home / "logs" / "server.log").symlink_to("/dev/full")  # every write: ENOSPC
    handler = logs.attach("server")
    monkeypatch.setitem(BY_NAME, "search_recent", replace(BY_NAME["search_recent"], handler=broken))
    served = State(Config(mama_home), "/p", tmp_path / "s.db")
    try:
        reply = await dispatch.call(served, "search_recent", {}, client=None)
    finally:
        served.close()
        logging.getLogger("mama").removeHandler(handler)
    assert reply.is_error and "failed inside MAMA (nothing was saved)" in reply.text
    assert "details are in stderr, as " in reply.text
    assert "server.log cannot be written (No space left on device)" in reply.text


# -- logs ------------------------------------------------------------------------------------


def test_logs_rotate_at_their_cap_and_stay_private(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "MAX_BYTES", 4000)
    turn = "checkpoint_turn failed, answered {} (fail open):\n" + "  File ...\n" * 300  # ~3.5 KB
    for i in range(40):  # a persistent fault, once per turn
        logs.append("server", f"turn {i}: {turn[:3500]}")
    folder = mama_home / "logs"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["server.log", "server.log.1", "server.log.2"]
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert total <= 3 * (4000 + 3600)
    assert all(mode(p) == 0o600 for p in folder.iterdir())
    assert "turn 39:" in (folder / "server.log").read_text()


def test_a_log_that_cannot_be_written_goes_to_stderr(
    mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (mama_home / "logs").mkdir(parents=True)
    (mama_home / "logs" / "hooks.log").symlink_to("/dev/full")
    assert logs.append("hooks", "session-start: something to say") is None
    assert "session-start: something to say" in capsys.readouterr().err
    assert logs.problem("hooks") == (
        f"{mama_home / 'logs' / 'hooks.log'} cannot be written (No space left on device)"
    )
    (mama_home / "logs" / "hooks.log").unlink()
    assert logs.append("hooks", "back") == mama_home / "logs" / "hooks.log"
    assert logs.problem("hooks") is None


# -- db_path ---------------------------------------------------------------------------------


def test_a_db_path_into_a_missing_folder_says_how_to_start_one(
    mama_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "no-such-folder" / "mama.db"
    Config(mama_home).set("db_path", str(typo))
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert f"but {typo.parent} does not exist" in err
    assert f"mkdir -p {typo.parent} && touch {typo}" in err
    assert not typo.parent.exists()
