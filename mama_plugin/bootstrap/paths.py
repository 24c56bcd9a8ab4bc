"""Where the plugin's environment lives and whether it is ready. Standard library only.

The same rules as ``mama_plugin/bootstrap/launch.sh`` (the launchers in ``bin/``), so the
bridge and the bootstrap agree with them about which environment runs MAMA:

1. ``$MAMA_VENV`` when set;
2. ``ROOT/.venv`` when it has ``bin/python`` (a development checkout, scripts/setup.sh);
3. ``DATA/venv`` when it is ready: its core marker is byte-identical to the shipped
   ``requirements-core.txt``, so a plugin update that changes dependencies rebuilds it.

``DATA`` is ``$CLAUDE_PLUGIN_DATA`` (Claude Code sets it for plugins' hooks and servers), else
the directory the launchers recorded in ``$MAMA_HOME/plugin-data`` when it exists, else
``$MAMA_HOME/plugin-env``. The data venv holds dependencies only: MAMA's code always runs
from ``ROOT`` through ``PYTHONPATH``, so an update that changes only code needs no rebuild.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import mama_home
from .launcher import HERE, ROOT

CORE_REQUIREMENTS = HERE / "requirements-core.txt"
LOCAL_REQUIREMENTS = HERE / "requirements-local.txt"
CORE_MARKER = "mama-core.txt"
LOCAL_MARKER = "mama-local.txt"


def data_dir() -> Path:
    """The plugin's persistent directory: ``$CLAUDE_PLUGIN_DATA``, else the one the launchers
    recorded in ``$MAMA_HOME/plugin-data`` (when it still exists), else under MAMA_HOME.

    Claude Code's Bash tool and a terminal have no ``CLAUDE_PLUGIN_DATA``: the record lets
    ``bin/mama`` run from them use the environment the hooks and the server already use.
    """
    env = os.environ.get("CLAUDE_PLUGIN_DATA")
    if env:
        return Path(env)
    try:
        recorded = data_record().read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        recorded = ""
    if recorded and os.path.isdir(recorded):
        return Path(recorded)
    return mama_home() / "plugin-env"


def data_record() -> Path:
    """Where the launchers record ``$CLAUDE_PLUGIN_DATA`` for the processes that lack it."""
    return mama_home() / "plugin-data"


def venv_dir() -> Path:
    """The venv the bootstrap builds (``DATA/venv``)."""
    return data_dir() / "venv"


def venv_python(venv: Path) -> Path:
    """The interpreter of ``venv``."""
    return venv / "bin" / "python"


def lock_path() -> Path:
    """The file the bootstrap holds an exclusive ``flock`` on while it works."""
    return data_dir() / "bootstrap.lock"


def local_failed_path() -> Path:
    """The record of the last failed local-runtime install (time, requirements digest)."""
    return data_dir() / "local-failed"


def log_path() -> Path:
    """The bootstrap's log: ``$MAMA_HOME/logs/bootstrap.log``."""
    return mama_home() / "logs" / "bootstrap.log"


def wheel_cache() -> Path:
    """Where scripts/setup.sh keeps the llama-cpp-python wheel it built (same rule)."""
    env = os.environ.get("MAMA_WHEEL_CACHE")
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mama" / "wheels"


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def core_ready(venv: Path | None = None) -> bool:
    """Whether the data venv has its core requirements (never raises)."""
    venv = venv or venv_dir()
    runs = os.access(venv_python(venv), os.X_OK)
    return runs and _same_bytes(venv / CORE_MARKER, CORE_REQUIREMENTS)


def local_ready(venv: Path | None = None) -> bool:
    """Whether the data venv also has the local-model runtime (never raises)."""
    venv = venv or venv_dir()
    return _same_bytes(venv / LOCAL_MARKER, LOCAL_REQUIREMENTS)


def select_venv() -> tuple[Path, str] | None:
    """The environment that runs MAMA and its kind (env, dev, data); None while not ready."""
    env = os.environ.get("MAMA_VENV")
    if env:
        return Path(env), "env"
    dev = ROOT / ".venv"
    if os.access(venv_python(dev), os.X_OK):
        return dev, "dev"
    if core_ready():
        return venv_dir(), "data"
    return None
