"""Is MAMA there in a real ``claude -p`` run with the default settings, and what does it cost?

Claude Code 2.1.197 in ``-p`` waits ~2 s for a plugin's MCP server: a server slower than that
is missing for the whole run — no MAMA tools for the model, and the UserPromptSubmit and Stop
``mcp_tool`` hooks skipped. Each round runs ``claude -p`` twice against a scripted fake model
(tests/fake_anthropic.py, in a development checkout with Claude Code in ``.tools/``), once with
``--plugin-dir`` on this checkout and once without, each in a fresh HOME, taking turns, and
with Claude Code's default settings (no ``MCP_CONNECTION_NONBLOCKING``). With the plugin it
records per run whether the first model request listed MAMA's tools, whether the
UserPromptSubmit hook injected the insight seeded in the store (the prompt is about it), and
whether the Stop hook wrote the session's rolling checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import sqlite3
import subprocess
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mama_plugin import save_insight
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.project import project_key
from mama_plugin.storage import Store

from .checkout import CLAUDE, ROOT, fake_anthropic
from .floor_plugin import write_floor_plugin
from .latency import percentile
from .phases import PHASES, marks, phases
from .presence_arms import arm_lines, cpu_p50, p50

TOOL_PREFIX = "mcp__plugin_mama_mama__"
RUN_TIMEOUT_S = 120
# An insight, not a decision: the session start tells the project's decisions, and the prompt
# hook never repeats what the session start told (issue 12, "nothing twice").
DECISION = {
    "topic": "auth_strategy",
    "content": "Use stateless JWT access tokens for API auth: no session store to run, and the "
    "API must serve 10K req/s on two nodes",
}
PROMPT = "Should the API use stateless JWT access tokens for auth?"
OBSERVED = re.compile(r"observe_prompt answered in (\d+) ms \((\d+) ms waiting")
RECALLED = re.compile(r"observe_prompt: \d+ memories recalled by (vectors|keywords)")


@dataclass
class Run:
    """One ``claude -p`` run and what it showed."""

    plugin: bool
    wall_s: float
    exit_code: int
    plugin_dir: str = ""  # the checkout Claude Code loaded ("" without the plugin)
    # CPU seconds (user + system) of Claude Code and every process it waited for (the hook,
    # the server): what the run cost the machine, less sensitive to load than its wall time.
    cpu_s: float = 0.0
    tools_on_first_request: bool = False
    prompt_hook_injected: bool = False
    stop_checkpoint_written: bool = False
    # From the server's log: observe_prompt's answer time and how much of it was the warm-up.
    observe_ms: float | None = None
    observe_wait_ms: float | None = None
    prompt_by_vectors: bool = False  # the first prompt was matched by meaning (the model ready)
    # Where the time went, from Claude Code's debug log (benchmarks/phases.py), in milliseconds.
    phases: dict[str, float] = field(default_factory=dict)


def check_claude() -> None:
    """Raise with the fix when Claude Code is not installed in ``.tools/``."""
    if not CLAUDE.exists():
        raise MamaError(
            f"bench presence needs Claude Code at {CLAUDE}: run scripts/setup.sh --dev "
            "(it installs @anthropic-ai/claude-code with npm)"
        )


def seed(mama_home: Path, project: Path) -> None:
    """Save the decision the prompt is about, so the prompt hook has something to inject, and
    build the embedding model as a user's install has it (else the servers would build it)."""
    from mama_plugin.embeddings import resolve_model

    project.mkdir(parents=True, exist_ok=True)
    config = Config(mama_home)
    with Store.open(config=config) as store:
        save_insight(store, project_key(project), DECISION)
    with contextlib.suppress(MamaError):  # no local extra: keyword search, nothing to build
        resolve_model(config)


# :func:`seed` in the product's own modules, for another checkout to run with its code.
SEED = """
import contextlib, sys
from pathlib import Path
from mama_plugin.config import Config
from mama_plugin.embeddings import resolve_model
from mama_plugin.errors import MamaError
from mama_plugin.project import project_key
from mama_plugin import save_insight
from mama_plugin.storage import Store
home, project = Path(sys.argv[1]), Path(sys.argv[2])
project.mkdir(parents=True, exist_ok=True)
config = Config(home)
with Store.open(config=config) as store:
    save_insight(store, project_key(project), {"topic": sys.argv[3], "content": sys.argv[4]})
with contextlib.suppress(MamaError):
    resolve_model(config)
"""


def seed_with(checkout: Path, mama_home: Path, project: Path) -> None:
    """:func:`seed` by another checkout's own code (its schema may be older than this one's).

    The script imports that checkout's product modules only: a baseline from before the
    benchmarks left the package has no ``benchmarks`` to import.
    """
    python = str(checkout / ".venv" / "bin" / "python")
    subprocess.run(
        [python, "-P", "-c", SEED, str(mama_home), str(project), *DECISION.values()],
        env={**os.environ, "PYTHONPATH": str(checkout), "MAMA_HOME": str(mama_home)},
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=RUN_TIMEOUT_S,
    )


def _injected(request: dict[str, Any]) -> str:
    """The UserPromptSubmit hook's additional context in one model request ("" if none)."""
    for message in request.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            body = block.get("text", "") if isinstance(block, dict) else ""
            if "UserPromptSubmit hook additional context" in str(body):
                return str(body)
    return ""


def _checkpoint_written(mama_home: Path, session_id: str) -> bool:
    """Whether the session left its automatic checkpoint, read without migrating the database
    (a ``--baseline-plugin`` checkout's store may be at an older schema than this code's: a
    ``Store.open`` here once upgraded it, and the baseline's own server then refused it)."""
    try:  # no database at all: the floor's arm (its server stores nothing)
        conn = sqlite3.connect(f"{Config(mama_home).db_path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        rows = conn.execute(
            "SELECT metadata FROM memories WHERE session_id = ? AND type = 'checkpoint'",
            (session_id,),
        ).fetchall()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return any(json.loads(metadata).get("auto") for (metadata,) in rows)


def run_once(
    home: Path,
    project: Path,
    mama_home: Path,
    *,
    plugin: bool,
    plugin_dir: Path = ROOT,
    prompt: str = PROMPT,
) -> Run:
    """One ``claude -p`` of ``prompt`` in ``project``, in its own ``home``, with MAMA (the
    checkout ``plugin_dir``) or not."""
    fake = fake_anthropic()
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    log = mama_home / "logs" / "server.log"
    log_start = log.stat().st_size if log.exists() else 0
    session_id = str(uuid.uuid4())
    debug_log = home / "claude-debug.txt"
    command = [str(CLAUDE), "-p", prompt, "--session-id", session_id, "--debug-file",
               str(debug_log)]  # fmt: skip
    if plugin:
        command += ["--plugin-dir", str(plugin_dir), "--allowedTools", TOOL_PREFIX.rstrip("_")]
    with fake.FakeAnthropic([fake.text("Let me check.")]) as model:
        env = fake.claude_env(model, home, MAMA_HOME=str(mama_home))
        env.pop("MCP_CONNECTION_NONBLOCKING", None)  # the default settings
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: bytecode is kept
        started, used = time.perf_counter(), _children_cpu()
        proc = subprocess.Popen(command, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)  # fmt: skip
        try:
            code = proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # Claude Code and its server
                os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        wall = time.perf_counter() - started
        used = _children_cpu() - used
        requests = model.main_requests
    run = Run(plugin, round(wall, 3), code, str(plugin_dir) if plugin else "", round(used, 3))
    if debug_log.exists():
        run.phases = phases(marks(debug_log))
    if plugin and requests:
        first = requests[0]
        names = [t.get("name", "") for t in first.get("tools", [])]
        run.tools_on_first_request = any(n.startswith(TOOL_PREFIX) for n in names)
        context = _injected(first)
        run.prompt_hook_injected = "<mama-memory>" in context and "stateless JWT" in context
        run.stop_checkpoint_written = _checkpoint_written(mama_home, session_id)
        if log.exists():
            with log.open("rb") as lines:
                lines.seek(log_start)
                logged = lines.read().decode("utf-8", "replace")
            found = OBSERVED.search(logged)
            recalled = RECALLED.search(logged)
            run.prompt_by_vectors = recalled is not None and recalled[1] == "vectors"
            if found:
                run.observe_ms, run.observe_wait_ms = float(found[1]), float(found[2])
    return run


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def presence_run(
    runs: int = 20,
    *,
    baseline: Path | None = None,
    progress: Any = None,
    fresh_projects: bool = False,
    prompt: str = PROMPT,
    floor: bool = False,
) -> tuple[str, dict[str, object]]:
    """``runs`` rounds of with and without the plugin; counts, medians, p95, the added time.

    The rounds follow each other in one project seeded once, as a user's sessions do (each
    leaves its checkpoint; the next session starts from it). ``fresh_projects``: a new
    project seeded with the insight in every round instead, so every session is its
    project's first (nothing cached for its start, its memory still to embed).
    ``baseline``: another checkout of MAMA (e.g. main's) run as a third arm in every round,
    with its own MAMA_HOME (the two may differ in schema), seeded the same. ``prompt``: every
    run's (another than ``PROMPT`` is not about the insight: it injects nothing). ``floor``:
    also MAMA's shape with nothing in it (:mod:`.floor_plugin`), what any such plugin costs.
    """
    check_claude()
    fake_anthropic()
    if baseline is not None and not (baseline / ".venv" / "bin" / "python").exists():
        raise MamaError(
            f"--baseline-plugin {baseline} has no environment (.venv): its hooks would build one "
            f"in every run; give it this checkout's: ln -s {ROOT / '.venv'} {baseline / '.venv'}"
        )
    load_before = os.getloadavg()
    arms: dict[str, list[Run]] = {"with": [], "without": [], "baseline": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="mama-presence-") as folder:
        base = Path(folder)
        homes = {"with": base / "mama-home", "baseline": base / "mama-home-baseline",
                 "floor": base / "mama-home-floor"}  # fmt: skip
        plans = [("with", ROOT), *([("baseline", baseline)] if baseline else []),
                 *([("floor", write_floor_plugin(base / "floor"))] if floor else []),
                 ("without", None)]  # fmt: skip
        for i in range(runs):
            project = base / (f"project-{i}" if fresh_projects else "project")
            for arm, plugin_dir in plans:
                mama_home = homes.get(arm, homes["with"])
                if fresh_projects or i == 0:
                    if arm == "with":
                        seed(mama_home, project)
                    elif arm == "baseline" and plugin_dir is not None:
                        seed_with(plugin_dir, mama_home, project)
                home = base / f"home-{i}-{arm}"
                run = run_once(home, project, mama_home, plugin=plugin_dir is not None,
                               plugin_dir=plugin_dir or ROOT, prompt=prompt)  # fmt: skip
                arms[arm].append(run)
                if progress is not None:
                    progress(f"run {i + 1}/{runs} {arm}: {run.wall_s:.2f} s")
    load_after = os.getloadavg()
    text, data = _report(arms["with"], arms["without"], load_before, load_after)
    scenario = ("a new project with one memory in every run" if fresh_projects else
                "one project seeded with one memory, the runs following each other")  # fmt: skip
    data["scenario"] = scenario
    data["prompt"] = prompt
    text = text.replace(":\n", f"; {scenario}; the prompt {prompt!r}:\n", 1)
    if baseline is not None:
        lines, figures = arm_lines(
            f"baseline {baseline}", arms["baseline"], arms["with"], arms["without"], data
        )
        data["baseline"] = {"plugin_dir": str(baseline), **figures}
        text += lines
    if floor:
        lines, data["floor"] = arm_lines(
            "floor",
            arms["floor"],
            arms["with"],
            arms["without"],
            data,
            counts=False,
        )
        text += lines
    return text, data


def _report(
    with_plugin: list[Run], without: list[Run], load_before: Any, load_after: Any
) -> tuple[str, dict[str, object]]:
    n = len(with_plugin)
    walls = [r.wall_s for r in with_plugin]
    bare = [r.wall_s for r in without]
    added = percentile(walls, 50) - percentile(bare, 50)
    data: dict[str, object] = {
        "runs": n,
        "tools_on_first_request": sum(r.tools_on_first_request for r in with_plugin),
        "prompt_hook_injected": sum(r.prompt_hook_injected for r in with_plugin),
        "stop_checkpoint_written": sum(r.stop_checkpoint_written for r in with_plugin),
        "prompt_by_vectors": sum(r.prompt_by_vectors for r in with_plugin),
        "failed_runs": sum(r.exit_code != 0 for r in [*with_plugin, *without]),
        "with_plugin_p50_s": round(percentile(walls, 50), 2),
        "with_plugin_p95_s": round(percentile(walls, 95), 2),
        "without_plugin_p50_s": round(percentile(bare, 50), 2),
        "without_plugin_p95_s": round(percentile(bare, 95), 2),
        "added_p50_s": round(added, 2),
        "cpu_with_p50_s": cpu_p50([r.cpu_s for r in with_plugin]),
        "cpu_without_p50_s": cpu_p50([r.cpu_s for r in without]),
        "observe_prompt_p50_ms": p50([r.observe_ms for r in with_plugin]),
        "observe_prompt_warm_up_wait_p50_ms": p50([r.observe_wait_ms for r in with_plugin]),
        "load_average": [round(x, 2) for x in (*load_before, *load_after)],
        "runs_detail": [asdict(r) for r in [*with_plugin, *without]],
    }
    text = (
        f"claude -p with the default settings, {n} runs with MAMA and {n} without (taking "
        "turns, fake model):\n"
        f"  MAMA's tools on the first model request: {data['tools_on_first_request']}/{n}\n"
        f"  UserPromptSubmit (observe_prompt) injected the seeded insight: "
        f"{data['prompt_hook_injected']}/{n} (by vectors: {data['prompt_by_vectors']}/{n})\n"
        f"  Stop (checkpoint_turn) wrote the rolling checkpoint: "
        f"{data['stop_checkpoint_written']}/{n}\n"
        f"  wall time with MAMA p50 {data['with_plugin_p50_s']} s, p95 "
        f"{data['with_plugin_p95_s']} s; without p50 {data['without_plugin_p50_s']} s, p95 "
        f"{data['without_plugin_p95_s']} s; added p50 {data['added_p50_s']} s\n"
        f"  CPU per run (Claude Code, the hook, the server) p50 {data['cpu_with_p50_s']} s with "
        f"MAMA, {data['cpu_without_p50_s']} s without\n"
        f"  observe_prompt answered in p50 {data['observe_prompt_p50_ms']} ms, of which "
        f"{data['observe_prompt_warm_up_wait_p50_ms']} ms waiting for the server's warm-up\n"
        + _phase_lines(with_plugin, without, data)
        + f"  failed runs: {data['failed_runs']}; load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after ({os.cpu_count()} CPUs)\n"
    )
    return text, data


def _phase_lines(with_plugin: list[Run], without: list[Run], data: dict[str, object]) -> str:
    """The median of each phase with and without MAMA (Claude Code's debug log), one a line."""
    lines, table = ["  phases, p50 ms (with MAMA | without), from Claude Code's debug log:\n"], {}
    for name, _, _ in PHASES:
        mine = p50([r.phases.get(name) for r in with_plugin])
        bare = p50([r.phases.get(name) for r in without])
        if mine is None and bare is None:
            continue
        table[name] = {"with": mine, "without": bare}
        lines.append(f"    {name:<36} {mine if mine is not None else '—':>8} | "
                     f"{bare if bare is not None else '—'}\n")  # fmt: skip
    data["phases_p50_ms"] = table
    return "".join(lines)
