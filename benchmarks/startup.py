"""Process start to ``initialize`` and first ``tools/list`` answered: on every session's path.

Claude Code 2.1.197 in ``-p`` waits ~2 s for a plugin's server, and calls the UserPromptSubmit
hook's tool ~0.1 s after ``tools/list``. Each round starts, in a fresh temporary MAMA_HOME:

- the front as Claude Code starts it (``sh bin/mama-server``, the plugin's ``.mcp.json``),
- the SDK server (``mama serve --sdk``),
- a bare Python that answers each line with an empty result (the floor: interpreter start and
  a pipe round trip, measured the same way),
- the front again in a MAMA_HOME holding a store of 1,000 memories of the project (a returning
  user: the first list is seeded from the project's memory, which opens the store),
- a fresh install's bridge: a copy of the plugin with no Python environment yet, its bootstrap
  lock held by this run (a bootstrap "running"), so ``sh bin/mama-server`` runs the standard-
  library bridge that answers while the environment is built,

sends ``initialize``, ``notifications/initialized`` and ``tools/list``, and reads the times the
answers arrived, from just before the process was spawned. The three take turns, so the
machine's load falls on each alike; ``python -c pass`` is timed too, and the load average.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .checkout import ROOT
from .latency import percentile
from .stdio import StdioServer

FRONT = ("sh", str(ROOT / "bin" / "mama-server"))
SDK = (sys.executable, "-m", "mama_plugin.cli", "serve", "--sdk")
# Reads lines and answers each request with an empty result: no imports beyond sys and json.
ECHO = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if 'id' in m:\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n"
)
BARE = (sys.executable, "-c", ECHO)
SERVERS = {"front": FRONT, "sdk": SDK, "bare_stdio": BARE, "front_store": FRONT, "bridge": FRONT}
STORED = 1000  # memories in the returning user's store
_BASE = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
SYSTEM_PYTHON = str(_BASE if _BASE.exists() else sys.executable)


@contextlib.contextmanager
def _fresh_install(folder: Path) -> Iterator[tuple[tuple[str, ...], dict[str, str]]]:
    """A plugin copied as Claude Code installs it, with no environment, its bootstrap held.

    Yields the command that starts its server and the environment Claude Code gives it. The
    lock is held for the whole run, as a running bootstrap holds it: every start is the bridge.
    """
    root = folder / "Plugin Cache" / "mama"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("bin", "mama_plugin", "templates"):
        shutil.copytree(ROOT / part, root / part, ignore=skip)
    data = folder / "plugin data"
    data.mkdir()
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith(("CLAUDE", "MAMA_")) and k != "PYTHONPATH"}  # fmt: skip
    env = {**inherited, "CLAUDE_PLUGIN_DATA": str(data), "MAMA_PYTHON": SYSTEM_PYTHON,
           "MAMA_WHEEL_CACHE": str(folder / "no-wheels")}  # fmt: skip
    with open(data / "bootstrap.lock", "ab") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield ("sh", str(root / "bin" / "mama-server")), env


def _store_template(folder: Path) -> tuple[Path, Path]:
    """A MAMA_HOME with ``STORED`` memories of a project, and that project's directory."""
    from mama_plugin.config import Config
    from mama_plugin.project import project_key
    from mama_plugin.storage import Store

    from .latency import build

    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    with Store.open(config=Config(home)) as store:
        build(store, STORED, None)
        with store.transaction():  # the synthetic memories, moved into this project
            store.conn.execute("UPDATE memories SET project = ?", (project_key(project),))
    return home, project


def _one_start(
    command: tuple[str, ...],
    template: tuple[Path, Path] | None = None,
    base_env: dict[str, str] | None = None,
) -> tuple[float, float]:
    """Milliseconds from spawn to ``initialize`` answered and to ``tools/list`` answered."""
    with tempfile.TemporaryDirectory(prefix="mama-startup-") as home:
        cwd = home
        if template is not None:  # a copy of the store, so no start sees another's writes
            shutil.copytree(template[0], home, dirs_exist_ok=True)
            cwd = str(template[1])
        if base_env is None:
            env = {**os.environ, "MAMA_HOME": home, "PYTHONPATH": str(ROOT)}
        else:
            env = {**base_env, "MAMA_HOME": home}
        # As a user's machine runs it: Python writes (and then reads) MAMA's bytecode.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        started = time.perf_counter()
        server = StdioServer(env, cwd=cwd, command=command)
        try:
            server.request("tools/list", {})
            at = server.answered_at
            return (at["initialize"] - started) * 1000, (at["tools/list"] - started) * 1000
        finally:
            server.close()


def bare_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def _figures(name: str, values: list[float]) -> dict[str, float]:
    return {
        f"{name}_p50_ms": round(percentile(values, 50), 1),
        f"{name}_p95_ms": round(percentile(values, 95), 1),
    }


Arm = tuple[tuple[str, ...], tuple[Path, Path] | None, dict[str, str] | None]


def _one_round(times: dict[str, tuple[list[float], list[float]]], arms: dict[str, Arm]) -> None:
    """One cold start of each server, taking turns."""
    for name, arm in arms.items():
        initialize_ms, tools_list_ms = _one_start(*arm)
        times[name][0].append(initialize_ms)
        times[name][1].append(tools_list_ms)


def startup_run(runs: int = 30) -> tuple[str, dict[str, object]]:
    """Time ``runs`` cold starts of each server and of the baselines; medians and p95."""
    load_before = os.getloadavg()
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in SERVERS}
    bare: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="mama-startup-store-") as folder,
        _fresh_install(Path(folder) / "install") as (bridge, bridge_env),
    ):
        template = _store_template(Path(folder))
        arms: dict[str, Arm] = {name: (command, None, None) for name, command in SERVERS.items()}
        arms["front_store"] = (FRONT, template, None)
        arms["bridge"] = (bridge, None, bridge_env)
        for arm in arms.values():  # untimed: bytecode written, disk cache warm
            _one_start(*arm)
        for _ in range(runs):
            _one_round(times, arms)
            bare.append(bare_python())
    load_after = os.getloadavg()

    data: dict[str, object] = {"runs": runs}
    for name, (initialized, listed) in times.items():
        data |= _figures(f"{name}_initialize", initialized)
        data |= _figures(f"{name}_tools_list", listed)
    data |= _figures("bare_python", bare)
    # The names earlier reports used: the server Claude Code runs, to its first tools/list.
    data["serve_to_tools_list_p50_ms"] = data["front_tools_list_p50_ms"]
    data["serve_to_tools_list_p95_ms"] = data["front_tools_list_p95_ms"]
    data["load_average"] = [round(x, 2) for x in (*load_before, *load_after)]
    rows = [
        ("front (sh bin/mama-server)", "front"),
        ("mama serve --sdk", "sdk"),
        ("bare Python answering stdio", "bare_stdio"),
        (f"front, store of {STORED} memories", "front_store"),
        ("bridge (fresh install)", "bridge"),
    ]
    lines = [
        f"process start → first tools/list answered ({runs} cold starts each, fresh MAMA_HOME, "
        "taking turns), ms:",
        f"  {'server':<30} {'initialize p50':>14} {'p95':>7} {'tools/list p50':>15} {'p95':>7}",
    ]
    for label, key in rows:
        lines.append(
            f"  {label:<30} {data[f'{key}_initialize_p50_ms']:>14} "
            f"{data[f'{key}_initialize_p95_ms']:>7} {data[f'{key}_tools_list_p50_ms']:>15} "
            f"{data[f'{key}_tools_list_p95_ms']:>7}"
        )
    lines.append(
        f"  python -c pass: p50 {data['bare_python_p50_ms']} ms, p95 {data['bare_python_p95_ms']} "
        f"ms; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs)"
    )
    return "\n".join(lines) + "\n", data
