"""``$MAMA_HOME`` is private from its first moment: no window in which another account enters it.

Every test runs under umask 022 (conftest), where a plain ``mkdir -p`` makes 0755 folders. The
launchers' shell code runs alone (no Python afterwards to narrow what it made), and the
bootstrap's folders are watched as ``os.mkdir`` makes them, before anything could chmod them.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mama_plugin.bootstrap import build, notice, paths, pending

ROOT = Path(__file__).resolve().parents[1]
SH = shutil.which("sh") or "/bin/sh"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _shell(script: str, env: dict[str, str]) -> None:
    """Run ``script`` after sourcing the launchers' shared code, as bin/* do."""
    launch = ROOT / "mama_plugin" / "bootstrap" / "launch.sh"
    done = subprocess.run(
        [SH, "-c", f'. "{launch}"\n{script}'],
        env={**env, "ROOT": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def _env(**values: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MAMA_"))}
    return {**inherited, **values}


def test_the_launchers_create_mama_home_0700_under_umask_022(tmp_path: Path) -> None:
    assert os.umask(0o022) == 0o022  # the fixture's, inherited by the shell
    # Sourcing alone records CLAUDE_PLUGIN_DATA in $MAMA_HOME/plugin-data: the home's first mkdir.
    home = tmp_path / "recorded" / ".mama"
    _shell("", _env(MAMA_HOME=str(home), CLAUDE_PLUGIN_DATA=str(tmp_path / "data")))
    assert (mode(home.parent), mode(home)) == (0o700, 0o700)
    assert mode(home / "plugin-data") == 0o600
    # A folder and its missing parents, as the bootstrap's and the catch-up's logs are made.
    home = tmp_path / "nested" / ".mama"
    _shell('mama_mkdir "$MAMA_LOGS"', _env(MAMA_HOME=str(home)))
    assert (mode(home.parent), mode(home), mode(home / "logs")) == (0o700, 0o700, 0o700)
    # Without MAMA_HOME: ~/.mama, where the environment is built (plugin-env) before any Python.
    user = tmp_path / "user"
    user.mkdir()
    _shell('mama_mkdir "$MAMA_DATA"', _env(HOME=str(user)))
    assert mode(user / ".mama") == mode(user / ".mama" / "plugin-env") == 0o700
    assert mode(user) == 0o755  # the user's own folder is not MAMA's to change


def test_a_first_hook_without_python_leaves_a_private_home_and_log(tmp_path: Path) -> None:
    tools = tmp_path / "tools"  # the shell's tools and no Python: nothing narrows it afterwards
    tools.mkdir()
    for name in ("readlink", "dirname", "cmp", "mkdir", "date", "setsid", "nohup"):
        if found := shutil.which(name):
            (tools / name).symlink_to(found)
    plugin = tmp_path / "plugin"  # the launchers alone: no .venv beside them, as installed
    shutil.copytree(ROOT / "bin", plugin / "bin")
    (plugin / "mama_plugin" / "bootstrap").mkdir(parents=True)
    shutil.copy(
        ROOT / "mama_plugin" / "bootstrap" / "launch.sh", plugin / "mama_plugin" / "bootstrap"
    )
    user = tmp_path / "user"
    user.mkdir()
    env = _env(HOME=str(user), PATH=str(tools), MAMA_PYTHON=str(tmp_path / "no-python"))
    hook = subprocess.run(
        [SH, str(plugin / "bin" / "mama-hook"), "session-start"],
        input="{}",
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    home = user / ".mama"
    assert (mode(home), mode(home / "logs"), mode(home / "logs" / "hooks.log")) == (
        0o700,
        0o700,
        0o600,
    )


def test_bin_mama_first_run_in_a_fresh_home_leaves_it_0700(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    env = _env(HOME=str(user), MAMA_VENV=sys.prefix, CLAUDE_PLUGIN_DATA=str(tmp_path / "data"))
    done = subprocess.run(
        [SH, str(ROOT / "bin" / "mama"), "status"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    home = user / ".mama"
    assert mode(home) == 0o700 and mode(home / "plugin-data") == 0o600


def test_the_bootstrap_makes_every_folder_0700_as_it_creates_it(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA", raising=False)  # data under $MAMA_HOME/plugin-env
    created: dict[Path, int] = {}
    real = os.mkdir

    def watched(path: str | os.PathLike[str], mode: int = 0o777, *args: object) -> None:
        real(path, mode)
        created[Path(path)] = stat.S_IMODE(os.stat(path).st_mode)  # before any chmod could run

    monkeypatch.setattr(os, "mkdir", watched)
    build.Log(paths.log_path()).close()  # $MAMA_HOME and logs/, the bootstrap's first act
    notice.mark_shown()  # plugin-env/
    with pending.locked():
        pass
    assert {mama_home, mama_home / "logs", mama_home / "plugin-env"} <= set(created)
    assert created == dict.fromkeys(created, 0o700), {str(p): oct(m) for p, m in created.items()}
