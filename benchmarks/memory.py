"""``python -m benchmarks memory``: what each ``mama serve`` holds, at rest, after a draft, idle.

``--sessions`` real ``mama serve`` processes run at once on one MAMA home (as Claude Code
sessions on one machine do), each spoken to over its stdio pipe in JSON-RPC
(:class:`.stdio.StdioServer`). Each learns a recorded transcript from the Stop hook's tool and
answers a few prompts, its embedder loaded: **at rest**. Then each drafts one decision
(``save_decision`` with ``draft: true``, as ``/mama-save`` does), one session after another:
**after a draft**, every server having loaded the assist model. Then nothing is asked for
``assist_idle_s`` (``--idle-s``) after the model's last job: **idle**, once each server has
released the model. The servers run ``--profile`` (default: the configured ``assist_profile``,
or ``assist_model_path``): a profile that earned no draft layer drafts with the extractor
alone, loads no model, and has nothing to release. A profile that earned a checkpoint line is
asked for it after each session's Stop (``LINES_AFTER_S`` later): the run waits for every
session's lines job (its ``pending_lines`` row gone), reading each server's RSS every second
meanwhile: **while the lines jobs ran**, the most each held. Per server: VmRSS and PSS
(shared pages split between the processes that map them) from ``/proc``, and the peak RSS over
the whole run (VmHWM); the model, its file, its threads and the load average are reported with
them.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from mama_plugin.assist.models import active, resolve_model
from mama_plugin.config import Config
from mama_plugin.embeddings import minilm
from mama_plugin.embeddings.kinds import chosen, kind_of
from mama_plugin.errors import MamaError

from .checkout import FIXTURES
from .coauthor import profile_config
from .draft import DECISIONS, _load_average
from .stdio import StdioServer
from .synthetic import QUERIES

TARGET_MB = 200  # per session at rest (issue 30)
SETTLE_S = 5.0  # after the warm-up, before "at rest" is read: the embedder loads meanwhile
MARGIN_S = 15.0  # past assist_idle_s and the model jobs: how long a release may take
RELEASED_MB = 60.0  # within this of its RSS at rest, a server has released the model
LINES_WAIT_S = 20.0  # the server's delay before a session's checkpoint lines job


def memory_run(
    sessions: int,
    *,
    config: Config,
    idle_s: float | None = None,
    profile: str = "",
    progress: Any = None,
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures (``profile``: a profile's name or
    a GGUF's path; "" for the configured one)."""
    say = progress or (lambda _line: None)
    if not Path("/proc/self/status").exists():
        raise MamaError("bench memory reads /proc: it runs on Linux")
    chosen = profile or config.settings.assist_model_path or config.settings.assist_profile
    config = profile_config(config, chosen)
    model = resolve_model(config)  # the servers use this file, assembled once here
    assist = (
        {"assist_model_path": str(model)}
        if config.settings.assist_model_path
        else {"assist_profile": config.settings.assist_profile}
    )
    idle = float(idle_s if idle_s is not None else config.settings.assist_idle_s)
    stems = list(DECISIONS)
    with tempfile.TemporaryDirectory(prefix="mama-bench-memory-") as home:
        settings = {
            **assist,
            "embedding_model_path": str(_gguf(config)),
            "assist_idle_s": idle,
            "assist_threads": config.settings.assist_threads,
            "assist_nice": config.settings.assist_nice,
            "assist_draft_wait_s": config.settings.assist_draft_wait_s,
            "assist_timeout_s": config.settings.assist_timeout_s,
        }
        (Path(home) / "config.json").write_text(json.dumps(settings), encoding="utf-8")
        env = {**os.environ, "MAMA_HOME": home, "CLAUDE_CONFIG_DIR": str(Path(home) / "claude")}
        say(f"starting {sessions} mama serve")
        servers = [
            StdioServer({**env, "CLAUDE_PROJECT_DIR": f"/bench/memory/{i}"}, project=f"/bench/{i}")
            for i in range(sessions)
        ]
        drafts: list[dict[str, Any]] = []
        try:
            for i, server in enumerate(servers):
                transcript = str(FIXTURES / f"{stems[i % len(stems)]}.jsonl")
                server.call(
                    "checkpoint_turn", {"session_id": f"s{i}", "transcript_path": transcript}
                )
                _warm(server, f"s{i}")
            time.sleep(SETTLE_S)
            rest = [_memory(s.proc.pid) for s in servers]
            say("one draft in each session")
            for i, server in enumerate(servers):
                decision = DECISIONS[stems[i % len(stems)]]
                ms, result = server.call("save_decision", {"decision": decision, "draft": True})
                drafts.append({"s": round(ms / 1000, 1), "model": _drafted_by(result)})
            drafted = [_memory(s.proc.pid) for s in servers]
            lines = bool(active(config).checkpoint_lines)
            during, waited_lines = drafted, 0
            if lines:
                say("waiting for each session's checkpoint lines job")
                bound = LINES_WAIT_S + sessions * config.settings.assist_timeout_s + MARGIN_S
                during, waited_lines = _while_lines_run(servers, Path(home) / "mama.db", bound)
            last_draft = time.monotonic()
            released = drafted
            waited = 0.0
            freed = False
            # A profile not asked for drafts loaded no model: nothing to wait for.
            asked = lines or not all(d["model"].startswith("not asked") for d in drafts)
            if asked:
                say(f"waiting for assist_idle_s ({idle:g} s) to pass")
            # A draft that answered without the model leaves its job running (assist_timeout_s
            # at most), and so may the checkpoint lines' job its Stop queued; the idle time
            # counts from their end. Released: each server back near its RSS at rest (the
            # llama.cpp libraries stay imported).
            bound = 2 * config.settings.assist_timeout_s + idle + MARGIN_S
            while asked and waited < bound:
                time.sleep(1.0)
                released = [_memory(s.proc.pid) for s in servers]
                waited = time.monotonic() - last_draft
                freed = all(
                    r["rss_mb"] < a["rss_mb"] + RELEASED_MB
                    for r, a in zip(released, rest, strict=True)
                )
                if freed:
                    time.sleep(SETTLE_S)  # a release just begun (malloc_trim) shows in full
                    again = [_memory(s.proc.pid) for s in servers]
                    # The lower reading of each: a job queued meanwhile (a Stop's checkpoint
                    # lines) may have loaded the model again, which is not the release.
                    released = [
                        min(r, a, key=lambda m: m["rss_mb"])
                        for r, a in zip(released, again, strict=True)
                    ]
                    break
            # VmHWM is kept from the kernel's batched RSS counters and can trail a VmRSS read
            # by a fraction of a MB: the peak is the higher of it and every read here.
            reads = [rest, drafted, during if lines else [], released]
            peaks = [
                {
                    "rss_mb": max(
                        [_peak(s.proc.pid)["rss_mb"]] + [r[i]["rss_mb"] for r in reads if r]
                    )
                }
                for i, s in enumerate(servers)
            ]
        finally:
            for server in servers:
                server.close()
        told = [] if freed or not asked else _log_tail(Path(home))
    data: dict[str, Any] = {
        "sessions": sessions,
        "profile": chosen if not config.settings.assist_model_path else "your own model file",
        "model_asked": asked,
        "model_file": model.name,
        "model_mb": round(model.stat().st_size / 2**20),
        "assist_threads": config.settings.assist_threads,
        "assist_nice": config.settings.assist_nice,
        "assist_idle_s": idle,
        "released_after_s": round(waited, 1),
        "released": freed,
        "cores": os.cpu_count(),
        "load_average": _load_average(),
        "drafts": drafts,
        "at_rest": rest,
        "after_draft": drafted,
        "lines_earned": sorted(active(config).checkpoint_lines),
        "while_lines_ran": during if lines else [],
        "lines_waiting_at_first_read": waited_lines,
        "idle": released,
        "peak": peaks,
        "target_mb": TARGET_MB,
        "log": told,  # what the servers logged of the model, when a release was not seen
    }
    return _report(data), data


def _while_lines_run(
    servers: list[StdioServer], db: Path, bound: float
) -> tuple[list[dict[str, float]], int]:
    """Each server's highest RSS (and its PSS then), read every second until no session's
    checkpoint lines wait in the store any more (or ``bound`` seconds); and how many sessions
    still waited at the first read (0: every job had ended before it, so the row says little)."""
    most = [_memory(s.proc.pid) for s in servers]
    first = _waiting(db)
    deadline = time.monotonic() + bound
    waiting = first
    while waiting and time.monotonic() < deadline:
        time.sleep(1.0)
        now = [_memory(s.proc.pid) for s in servers]
        most = [max(m, n, key=lambda x: x["rss_mb"]) for m, n in zip(most, now, strict=True)]
        waiting = _waiting(db)
    return most, first


def _waiting(db: Path) -> int:
    """How many sessions' checkpoint lines wait in the store (read-only)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT count(*) FROM pending_lines").fetchone()[0])


def _peak(pid: int) -> dict[str, float]:
    """The most RSS process ``pid`` held over its life (VmHWM), in MB (no PSS: not kept)."""
    status = Path(f"/proc/{pid}/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return {"rss_mb": round(peak / 1024, 1)}


def _warm(server: StdioServer, session: str) -> None:
    """A few prompts, as a session's first turns: the hook lane, the store and the embedder
    (which a server loads from its start) in use."""
    for query in QUERIES[:3]:
        server.call("observe_prompt", {"prompt": query, "session_id": session})


def _drafted_by(result: dict[str, Any]) -> str:
    """What a draft says of the model ("drafted by …", "not used: …"): its structured ``model``,
    else read from its first line ("Draft of a decision, NOT saved (model: …). Check …")."""
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and isinstance(structured.get("model"), str):
        return str(structured["model"])
    first = result["content"][0]["text"].split("\n", 1)[0]
    return first.partition("(model: ")[2].rpartition("). ")[0]


def _memory(pid: int) -> dict[str, float]:
    """VmRSS and PSS of process ``pid``, in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        pss = next(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    except (OSError, StopIteration):
        pss = 0
    return {"rss_mb": round(rss / 1024, 1), "pss_mb": round(pss / 1024, 1)}


def _row(name: str, figures: list[dict[str, float]], target: int | None = None) -> str:
    rss = [f["rss_mb"] for f in figures]
    pss = [f["pss_mb"] for f in figures if "pss_mb" in f]
    met = "" if target is None else (" ✓" if max(rss) <= target else " ✗")
    return (
        f"| {name} | {' / '.join(f'{r:.0f}' for r in rss)} | {statistics.fmean(rss):.0f} | "
        f"{sum(rss):.0f} | {f'{statistics.fmean(pss):.0f}' if pss else '–'} |{met}"
    )


def _report(d: dict[str, Any]) -> str:
    drafts = "; ".join(f"{x['s']:g} s, {x['model']}" for x in d["drafts"])
    lines = [
        f"{d['sessions']} concurrent mama serve on one MAMA home; profile {d['profile']}, "
        f"assist model {d['model_file']} ({d['model_mb']} MB), {d['assist_threads']} thread(s), "
        f"nice +{d['assist_nice']}, assist_idle_s {d['assist_idle_s']:g}; {d['cores']} cores, load "
        f"average {d['load_average']}",
        "",
        "| when | RSS MB per server | mean | total | mean PSS |",
        "|---|---|---|---|---|",
        _row("at rest (embedder warm)", d["at_rest"], d["target_mb"]),
        _row("after one draft each", d["after_draft"], d["target_mb"]),
        *(
            [
                _row(
                    f"while the lines jobs ran (most held; {d['lines_waiting_at_first_read']} "
                    f"of {d['sessions']} still waiting at the first read)",
                    d["while_lines_ran"],
                )
            ]
            if d["while_lines_ran"]
            else []
        ),
        _row(
            f"idle ({'released' if d['released'] else 'not all released'} after "
            f"{d['released_after_s']:g} s)",
            d["idle"],
            d["target_mb"],
        )
        if d["model_asked"]
        else "| idle | – (no model was loaded: the profile is asked for no draft) | | | |",
        _row("peak over the run (VmHWM)", d["peak"]),
        "",
        f"Drafts: {drafts}. Target: ≤ {d['target_mb']} MB per session at rest.",
        *(["", "No release was seen; the servers' log of the model:"] if d.get("log") else []),
        *(f"    {line}" for line in d.get("log", [])),
    ]
    return "\n".join(lines) + "\n"


def _log_tail(home: Path, most: int = 20) -> list[str]:
    """The servers' last log lines about the model (its jobs, its releases, the checkpoint
    lines) and their warnings: why a release was not seen, for the report."""
    try:
        lines = (home / "logs" / "server.log").read_text("utf-8", "replace").splitlines()
    except OSError as exc:
        return [f"(no server log: {exc})"]
    said = ("mama.assist", "checkpoint lines", " WARNING ", " ERROR ", "server started")
    return [line for line in lines if any(s in line for s in said)][-most:]


def _gguf(config: Config) -> Path:
    """The GGUF llama.cpp loads for the configured model (the default's for a model that
    llama.cpp does not run)."""
    return getattr(kind_of(chosen(config)), "gguf", minilm.gguf)(config)
