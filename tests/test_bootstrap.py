"""The plugin bootstraps its own Python environment: launchers, lock, phases.

Every test copies the plugin (bin/, mama_plugin/, templates/) to a folder whose path has a
space, as a marketplace install does, and gives it a fresh ``CLAUDE_PLUGIN_DATA``. The real
bootstrap runs once, end to end, with pip against the package registry; its optional phase 2
is pointed at a local find-links page the test holds open, then fails, so the test can look
at the world while phase 2 runs and after it failed. What the server answers meanwhile (the
bridge) is tests/test_bridge.py, on these fixtures.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_stdio import Wire

from mama_plugin.bootstrap import bridge as bridge_module
from mama_plugin.bootstrap import build, paths
from mama_plugin.config import Config
from mama_plugin.server import listing
from mama_plugin.server.catalogue import MORE_TOOLS
from mama_plugin.storage import Store

ROOT = Path(__file__).resolve().parents[1]
DEV_VENV = Path(sys.prefix)  # the venv running the tests (scripts/setup.sh's .venv)
_BASE = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
SYSTEM_PYTHON = str(_BASE if _BASE.exists() else sys.executable)
SH = shutil.which("sh") or "/bin/sh"
STATIC = [t for t in json.loads(listing.TOOLS_JSON.read_text())["tools"] if t["name"] != MORE_TOOLS]
TOOL_NAMES = [t["name"] for t in STATIC]


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.05)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """A copy of the plugin as Claude Code installs it: no .venv, a space in the path."""
    root = tmp_path / "Plugin Cache" / "mama"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("bin", "mama_plugin", "templates"):
        shutil.copytree(ROOT / part, root / part, ignore=skip)
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "plugin data"


@pytest.fixture
def env(tmp_path: Path, mama_home: Path, data: Path) -> dict[str, str]:
    """What Claude Code gives a plugin's hooks and server, plus a system Python to find."""
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith(("CLAUDE", "MAMA_")) and k != "PYTHONPATH"}  # fmt: skip
    return {**inherited, "MAMA_HOME": str(mama_home), "CLAUDE_PLUGIN_DATA": str(data),
            "MAMA_PYTHON": SYSTEM_PYTHON, "MAMA_WHEEL_CACHE": str(tmp_path / "no-wheels")}  # fmt: skip


@contextlib.contextmanager
def held_lock(data: Path) -> Iterator[None]:
    """Hold the bootstrap lock as a running bootstrap would: others must leave at once."""
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "bootstrap.lock", "ab") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _lock_free(data: Path) -> bool:
    with open(data / "bootstrap.lock", "ab") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def _log(mama_home: Path) -> str:
    path = mama_home / "logs" / "bootstrap.log"
    return path.read_text() if path.exists() else ""


def _launch(plugin: Path, name: str, env: dict[str, str], *args: str,
            cwd: Path | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run([SH, str(plugin / "bin" / name), *args], input=stdin, env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=120)  # fmt: skip


def _fake_venv(folder: Path, label: str) -> Path:
    """A venv whose python only reports how it was called (the launchers' choice, observed)."""
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "venv={label}" "path=$PYTHONPATH" "$@"\n')
    python.chmod(0o755)
    return folder


def _mark_core_ready(venv: Path) -> None:
    (venv / paths.CORE_MARKER).write_bytes(paths.CORE_REQUIREMENTS.read_bytes())


# -- which environment runs MAMA -------------------------------------------------------------


@pytest.mark.parametrize("world", ["env", "dev", "data", "stale", "none"])
def test_launchers_and_python_choose_the_same_environment(
    world: str, plugin: Path, data: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    _mark_core_ready(_fake_venv(data / "venv", "data"))
    if world == "stale":  # a plugin update changed the requirements: rebuild
        (data / "venv" / paths.CORE_MARKER).write_text("mcp>=1,<2\n")
    if world == "none":
        shutil.rmtree(data / "venv")
    if world in {"env", "dev"}:
        _fake_venv(plugin / ".venv", "dev")
    if world == "env":
        env["MAMA_VENV"] = str(_fake_venv(tmp_path / "my venv", "env"))
    expected = {"env": "env", "dev": "dev", "data": "data"}.get(world)

    probe = "from mama_plugin.bootstrap import paths; c = paths.select_venv(); print(c and c[1])"
    chosen = subprocess.run([SYSTEM_PYTHON, "-P", "-c", probe], env={**env, "PYTHONPATH": str(plugin)},
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert chosen == str(expected)

    with held_lock(data):  # no real bootstrap here: one that starts leaves at once
        server = _launch(plugin, "mama-server", {**env, "MAMA_BOOTSTRAP_LOCAL": "0"})
        hook = _launch(plugin, "mama-hook", env, "user-prompt", stdin='{"prompt": "hi"}')
        if expected:
            assert server.stdout.splitlines() == [
                f"venv={expected}", f"path={plugin}", "-P", "-m", "mama_plugin.server.front"]  # fmt: skip
            assert hook.stdout.splitlines()[:5] == [
                f"venv={expected}", f"path={plugin}", "-P", "-m", "mama_plugin.hooks"]  # fmt: skip
        else:  # not ready: the hook is silent and starts the bootstrap
            assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
            # Both the hook's and the bridge's bootstrap ran, and left: the lock is held.
            _wait_until(lambda: _log(mama_home).count("holds the lock") == 2, "the bootstraps")


def test_bin_mama_without_claude_codes_variables_uses_the_recorded_environment(
    plugin: Path, data: Path, env: dict[str, str], mama_home: Path
) -> None:
    """Claude Code's Bash tool (and a terminal) has no CLAUDE_PLUGIN_DATA: no second venv."""
    _mark_core_ready(_fake_venv(data / "venv", "data"))
    hook = _launch(plugin, "mama-hook", env, "user-prompt", stdin='{"prompt": "hi"}')
    assert hook.stdout.splitlines()[0] == "venv=data"
    assert (mama_home / "plugin-data").read_text().strip() == str(data)

    bash_tool = {k: v for k, v in env.items() if k != "CLAUDE_PLUGIN_DATA"}
    ran = _launch(plugin, "mama", bash_tool, "config", "list")
    assert ran.stdout.splitlines()[:6] == [
        "venv=data", f"path={plugin}", "-P", "-m", "mama_plugin.cli", "config"]  # fmt: skip
    assert ran.stderr == ""  # nothing was prepared
    probe = "from mama_plugin.bootstrap import paths; print(paths.venv_dir())"
    python = subprocess.run([SYSTEM_PYTHON, "-P", "-c", probe], env={**bash_tool, "PYTHONPATH": str(plugin)},
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert python == str(data / "venv")

    shutil.rmtree(data)  # the plugin was uninstalled: the record no longer counts
    python = subprocess.run([SYSTEM_PYTHON, "-P", "-c", probe], env={**bash_tool, "PYTHONPATH": str(plugin)},
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert python == str(mama_home / "plugin-env" / "venv")


def test_bin_mama_runs_the_cli_from_the_plugin_root_whatever_the_cwd(
    plugin: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    decoy = tmp_path / "a project" / "mama_plugin"  # e.g. working inside MAMA's own repo
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise SystemExit('imported the project, not the plugin')")
    env["MAMA_VENV"] = str(DEV_VENV)
    status = _launch(plugin, "mama", env, "status", "--json", cwd=decoy.parent)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["database"] == str(mama_home / "mama.db")
    helped = _launch(plugin, "mama", env, "--help", cwd=decoy.parent)
    assert helped.returncode == 0 and "usage: mama" in helped.stdout


def test_without_python_the_hook_stays_silent_and_says_why_in_its_log(
    plugin: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    tools = tmp_path / "tools"  # a PATH with the shell's tools and no Python at all
    tools.mkdir()
    for name in ("readlink", "dirname", "cmp", "mkdir", "date", "setsid", "nohup"):
        if found := shutil.which(name):
            (tools / name).symlink_to(found)
    env.update(PATH=str(tools), MAMA_PYTHON=str(tmp_path / "no-python"))
    hook = _launch(plugin, "mama-hook", env, "session-start", stdin="{}")
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    logged = (mama_home / "logs" / "hooks.log").read_text()
    assert "needs Python 3.11 or newer" in logged and "MAMA_PYTHON" in logged
    server = _launch(plugin, "mama-server", env)
    assert server.returncode == 1 and "set MAMA_PYTHON" in server.stderr and not server.stdout


def test_a_failed_core_install_is_reported_and_a_broken_venv_rebuilt(
    plugin: Path, data: Path, env: dict[str, str], mama_home: Path
) -> None:
    (data / "venv" / "bin").mkdir(parents=True)
    (data / "venv" / "bin" / "python").write_text("not a program")  # a half-made venv
    env["MAMA_PIP_ARGS"] = "--no-index --find-links /nonexistent"
    run = _launch(plugin, "mama", env, "status")
    assert run.returncode == 1 and run.stdout == ""
    assert "could not be prepared; see" in run.stderr
    log = _log(mama_home)
    assert "incomplete or broken: recreating it" in log
    assert "core environment failed: pip exited with status 1" in log
    assert not (data / "venv" / paths.CORE_MARKER).exists()


# -- the real bootstrap, end to end -----------------------------------------------------------


class HeldPage:
    """A find-links page that answers (404) only when released: phase 2 waits on it."""

    def __init__(self) -> None:
        self.requested, self.release, self.count = threading.Event(), threading.Event(), 0
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                page.count += 1
                page.requested.set()
                page.release.wait(300)
                self.send_error(404)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_first_run_builds_the_core_then_the_local_runtime_without_blocking(
    plugin: Path, data: Path, env: dict[str, str], mama_home: Path, tmp_path: Path
) -> None:
    page = HeldPage()
    env["MAMA_PIP_ARGS_LOCAL"] = f"--no-index --find-links {page.url}"
    bridge = None
    try:
        # SessionStart's hook and the MCP server start at the same moment.
        started = time.monotonic()
        bridge = _BridgeWire(plugin, env, tmp_path)
        hook = _launch(plugin, "mama-hook", env, "session-start", stdin='{"source": "startup"}')
        assert (hook.returncode, hook.stderr) == (0, "")
        assert "installing" in json.loads(hook.stdout)["systemMessage"]  # once: test_catchup.py
        _initialize(bridge, "claude-code")
        assert [t["name"] for t in bridge.request("tools/list")["result"]["tools"]] == TOOL_NAMES
        print(
            f"bridge: initialize + tools/list answered {time.monotonic() - started:.3f} s after start"
        )

        # Phase 2 has begun (its pip is waiting on the page): the core is ready and used.
        assert page.requested.wait(600), _log(mama_home)
        core = float(re.findall(r"core environment ready in ([\d.]+) s", _log(mama_home))[0])
        print(f"bootstrap: core environment built in {core:.1f} s")
        assert _log(mama_home).count(f"creating {data / 'venv'} with") == 1  # one worked ...
        assert _log(mama_home).count("holds the lock; leaving the work to it") == 1  # one left
        assert (
            paths.CORE_REQUIREMENTS.read_bytes() == (data / "venv" / paths.CORE_MARKER).read_bytes()
        )
        status = _launch(plugin, "mama", env, "status", "--json")
        assert status.returncode == 0 and status.stderr == "", status.stderr
        assert json.loads(status.stdout)["memories"] == 0
        again = subprocess.run([SYSTEM_PYTHON, "-P", "-m", "mama_plugin.bootstrap"],
                               env={**env, "PYTHONPATH": str(plugin)}, timeout=60)  # fmt: skip
        assert again.returncode == 0 and _log(mama_home).count("holds the lock") == 2

        # The bridge hands the session to the real server in the new environment.
        saved = bridge.request("tools/call", {"name": "save_decision", "arguments": {
            "topic": "db", "decision": "SQLite", "reasoning": "single node, zero ops"}})  # fmt: skip
        assert saved["result"]["isError"] is False, saved
        listed = bridge.request("tools/list")["result"]["tools"]  # force_static: unchanged
        assert listed == STATIC
        errors, bridge = bridge.close(), None
        assert "Traceback" not in errors, errors
        with Store.open(config=Config(mama_home)) as store:
            assert [m.content for m in store.memories.recent(project=None, limit=5)] == ["SQLite"]

        # Phase 2 fails: recorded, core untouched, not retried within 24 h.
        page.release.set()
        _wait_until(lambda: _lock_free(data), "the bootstrap to finish", timeout=120)
        assert "local model runtime failed" in _log(mama_home)
        assert (data / "local-failed").exists()
        assert not (data / "venv" / paths.LOCAL_MARKER).exists()
        assert (data / "venv" / paths.CORE_MARKER).exists()
        requests = page.count
        subprocess.run([SYSTEM_PYTHON, "-P", "-m", "mama_plugin.bootstrap"], check=True,
                       env={**env, "PYTHONPATH": str(plugin)}, timeout=60)  # fmt: skip
        assert "local model runtime: skipped (it failed 0.0 h ago" in _log(mama_home)
        assert page.count == requests
    finally:
        if bridge is not None:
            bridge.close()
        page.close()
        if (data / "bootstrap.lock").exists():
            _wait_until(lambda: _lock_free(data), "the bootstrap to finish", timeout=120)


def test_a_failed_local_runtime_waits_24_hours_unless_its_requirements_change(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.delenv("MAMA_BOOTSTRAP_LOCAL", raising=False)
    data.mkdir()
    digest = build._local_digest()
    record = data / "local-failed"
    assert build.local_skip_reason(core_only=False) is None  # never tried
    record.write_text(f"{int(time.time()) - 3600} {digest} earlier\n")
    assert "failed 1.0 h ago" in str(build.local_skip_reason(core_only=False))
    record.write_text(f"{int(time.time()) - 25 * 3600} {digest} yesterday\n")
    assert build.local_skip_reason(core_only=False) is None
    record.write_text(f"{int(time.time())} {'0' * 64} other-requirements\n")
    assert build.local_skip_reason(core_only=False) is None
    assert build.local_skip_reason(core_only=True) == "--core-only"
    monkeypatch.setenv("MAMA_BOOTSTRAP_LOCAL", "0")
    assert build.local_skip_reason(core_only=False) == "MAMA_BOOTSTRAP_LOCAL=0"


# -- the bridge while the environment is not ready -----------------------------------------


class _BridgeWire(Wire):
    """``sh bin/mama-server`` spoken to in newline-delimited JSON-RPC."""

    def __init__(self, plugin: Path, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([SH, str(plugin / "bin" / "mama-server")], env=env, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)  # fmt: skip
        self.next_id = 0


def _initialize(wire: Wire, client: str) -> dict:
    answer = wire.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": client, "version": "1"}})  # fmt: skip
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


def test_bootstrap_and_bridge_import_only_the_standard_library(plugin: Path) -> None:
    # -S: no site-packages at all, so any third-party import fails here.
    code = "import mama_plugin.bootstrap.run, mama_plugin.bootstrap.bridge, mama_plugin.bootstrap.build"
    done = subprocess.run([SYSTEM_PYTHON, "-S", "-P", "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(plugin)})  # fmt: skip
    assert done.returncode == 0, done.stderr


# -- shipped files that must not drift -------------------------------------------------------


def _requirements(path: Path) -> list[str]:
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_requirement_files_match_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _requirements(paths.CORE_REQUIREMENTS) == project["dependencies"]
    assert _requirements(paths.LOCAL_REQUIREMENTS) == project["optional-dependencies"]["local"]
    assert f'--no-deps "{build.MINILM}"' in (ROOT / "scripts" / "setup.sh").read_text()


def test_the_bridge_leaves_out_the_tool_the_server_leaves_out_of_a_static_list() -> None:
    assert bridge_module.MORE == MORE_TOOLS


def test_tools_json_is_the_servers_static_list() -> None:
    assert listing.TOOLS_JSON.read_text(encoding="utf-8") == listing.render(), (
        "mama_plugin/bootstrap/tools.json is stale: regenerate it with "
        "`.venv/bin/python -m mama_plugin.server.listing`"
    )
    hook_tools = json.loads(listing.render())["hook_tools"]
    assert "observe_prompt" in hook_tools and "recall_decision" not in hook_tools


def test_the_bootstrap_log_is_private_and_capped(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "bootstrap.log"
    path.parent.mkdir()
    path.write_bytes(b"x" * (build.LOG_MAX + 1))  # a log grown past the cap by earlier builds
    log = build.Log(path)
    log("building")
    log.close()
    assert path.with_name("bootstrap.log.1").stat().st_size == build.LOG_MAX + 1
    assert path.read_text(encoding="utf-8").endswith("building\n")
    assert path.stat().st_mode & 0o777 == 0o600


def test_the_local_runtime_builds_the_embedding_model_or_says_the_server_will(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import requirements_missing

    from mama_plugin.embeddings import cache_path
    from mama_plugin.embeddings.ggufmeta import is_model_file

    if reason := requirements_missing():
        pytest.skip(reason)
    if not paths.venv_python(ROOT / ".venv").exists():
        pytest.skip("no development environment at .venv (scripts/setup.sh makes it)")
    monkeypatch.setenv("MAMA_HOME", str(tmp_path / "home"))
    log = build.Log(tmp_path / "bootstrap.log")
    build.build_embedding_model(tmp_path / "no-venv", log)  # no python there: logged only
    build.build_embedding_model(ROOT / ".venv", log)
    log.close()
    said = (tmp_path / "bootstrap.log").read_text(encoding="utf-8")
    assert "embedding model not built now" in said and "the server builds it" in said
    assert is_model_file(cache_path(Config(tmp_path / "home")))
    assert "just built" in said  # `mama models` said what it did, into the log
