"""Benchmark ``story``: does each session start resume the right work and tell the right open items?

Labelled multi-session sequences (``benchmarks/data/story_sequences.json``, 3 to 8 sessions of
one project each) are built from real Claude Code transcripts — the recorded fixtures of
``tests/fixtures/transcripts`` and this benchmark's own recordings of light and follow-up
sessions (``benchmarks/data/story_transcripts``, :mod:`.story_record`), whole or their first
turns. Each sequence is replayed into a fresh store through the Stop hook's checkpoint and the
product's save paths, and after every step the SessionStart hook's handler renders the start a
new session reads and the one a compacted session reads (:mod:`.story_replay`). Each start is
judged from its text (:mod:`.story_judge`) against the labels (:mod:`.story_labels`):

- **resume point right**: the start names the labelled session's work (target ≥ 0.95);
- **open items precision / recall**: its open-work entries that tell a labelled open item, and
  the labelled open items it tells (targets ≥ 0.90 each);
- **told twice**: starts where two entries tell the same item (target 0); **closed told as
  open**: starts telling an item the labels close; **tokens per start** (target ≤ 600);
- **decisions told** and, for the compact start, the decisions the startup start told that it
  cut; **trivial told**: starts that mention a trivial session ("hello").

``--baseline-plugin DIR`` replays the same sequences with another checkout's code, in its own
process, and prints its figures beside today's, judged the same way. No model is needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.errors import MamaError

from .answers import load_story
from .checkout import ROOT
from .coauthor import share, uptime
from .story_judge import Judged, judge
from .story_labels import Labels, Sequence, load, starts

SOURCES = ("startup", "compact")
TOKENS = 600
RUN_TIMEOUT_S = 1800
REPLAY = Path(__file__).with_name("story_replay.py")  # run as a script: imports no benchmarks


def plan(labels: Labels, sequences: list[Sequence]) -> dict[str, Any]:
    """What :mod:`.story_replay` replays: per sequence its project folder and steps."""
    out = []
    for q in sequences:
        places = q.places()
        steps: list[dict[str, Any]] = []
        for i, (kind, ref) in enumerate(q.steps):
            if kind == "forget":
                steps.append({"kind": "forget", "sessions": [f"{q.name}-{ref}"]})
                continue
            s = labels.sessions[ref]
            steps.append(
                {
                    "kind": "session",
                    "transcript": str(s.transcript),
                    "turns": s.turns,
                    "session_id": f"{q.name}-{places[str(i)]}",
                    "actions": s.actions,
                }
            )
        # A folder that does not exist: no cited file is found on disk, whatever the machine.
        out.append({"name": q.name, "project": f"/nonexistent/mama-story/{q.name}", "steps": steps})
    return {"sequences": out}


def replay_with(checkout: Path, replay_plan: dict[str, Any]) -> dict[str, Any]:
    """The starts ``checkout``'s code tells for ``replay_plan``, replayed in a process of its own
    (``nice``d; its own HOME, so no alias or config of the user's is read or written)."""
    venv = checkout / ".venv" / "bin" / "python"
    python = str(venv if venv.exists() else Path(sys.executable))
    with tempfile.TemporaryDirectory(prefix="mama-story-home-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(checkout),
            "HOME": tmp,
            "CLAUDE_CONFIG_DIR": str(Path(tmp) / "claude"),
            "MAMA_HOME": str(Path(tmp) / "mama"),
        }
        nice = ["nice", "-n", "10"] if shutil.which("nice") else []
        done = subprocess.run(
            [*nice, python, "-P", REPLAY],
            input=json.dumps(replay_plan),
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    if done.returncode != 0:
        raise MamaError(f"the story replay with {checkout} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def judged(labels: Labels, sequences: list[Sequence], told: dict[str, Any]) -> dict[str, list[Any]]:
    """Every start of every sequence judged, per source: (sequence, step, Judged, text)."""
    by_name = {s["name"]: s["starts"] for s in told["sequences"]}
    out: dict[str, list[Any]] = {source: [] for source in SOURCES}
    for q in sequences:
        items = labels.items[q.project]
        places = q.places()
        marks: dict[str, tuple[str, ...]] = {}
        trivial = []
        for i, (wanted, texts) in enumerate(zip(starts(labels, q), by_name[q.name], strict=True)):
            kind, ref = q.steps[i]
            if kind == "session":
                marks[places[str(i)]] = labels.sessions[ref].marks
                trivial += [places[str(i)]] if labels.sessions[ref].trivial else []
            for source in SOURCES:
                j = judge(
                    texts[source], wanted, items, dict(marks), labels.decisions[q.project], trivial
                )
                out[source].append((q, i + 1, j, texts[source]))
    return out


def figures(rows: list[Any], startup: list[Any] | None = None) -> dict[str, Any]:
    """The figures of one column (``startup``: the same starts at startup, for a compact one)."""
    js: list[Judged] = [r[2] for r in rows]
    entries = sum(len(j.entries) for j in js)
    wanted_open = sum(len(j.wanted.open) for j in js)
    wanted_dec = sum(len(j.wanted.decisions) for j in js)
    out: dict[str, Any] = {
        "starts": len(js),
        "resume_right": share(sum(j.resume_right for j in js), len(js)),
        "open_precision": share(sum(j.correct for j in js), entries),
        "open_recall": share(sum(len(j.found) for j in js), wanted_open),
        "told_twice": sum(bool(j.twice) for j in js),
        "closed_told_open": sum(bool(j.closed_told) for j in js),
        "tokens_mean": round(sum(j.tokens for j in js) / len(js), 1) if js else None,
        "tokens_max": max((j.tokens for j in js), default=None),
        "over_600": sum(j.tokens > TOKENS for j in js),
        "decisions_told": share(sum(len(j.decisions) for j in js), wanted_dec),
        "trivial_told": sum(j.trivial_told for j in js),
        "entries": entries,
        "open_labelled": wanted_open,
    }
    if startup is not None:
        out["decisions_cut"] = sum(
            len(set(s[2].decisions) - set(c[2].decisions))
            for s, c in zip(startup, rows, strict=True)
        )
    return out


def _start(row: Any) -> dict[str, Any]:
    """One start's judgement, for the JSON: what it resumed from and told against its labels."""
    q, step, j, _ = row
    return {
        "sequence": q.name,
        "step": step,
        "resume": {"wanted": j.wanted.resume, "told": j.resumed, "right": j.resume_right},
        "missed": [i for i in j.wanted.open if i not in j.found],
        "wrong_entries": [e for _, e, opens, _ in j.entries if not opens],
        "twice": j.twice,
        "closed_told": j.closed_told,
        "tokens": j.tokens,
    }


def by_case(rows: list[Any]) -> dict[str, dict[str, Any]]:
    """The figures of the starts of the sequences labelled with each case."""
    cases = sorted({c for r in rows for c in r[0].cases})
    return {c: figures([r for r in rows if c in r[0].cases]) for c in cases}


def story_run(
    baseline: Path | None = None,
    *,
    limit: int | None = None,
    verbose: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Replay and judge every labelled sequence (the first ``limit`` only, when given) with this
    checkout's code, and with ``baseline``'s beside it."""
    started, load_before = time.perf_counter(), uptime()
    labels = load(scripted={name: actions for name, actions in load_story()[0]})
    sequences = labels.sequences[:limit] if limit else labels.sequences
    the_plan = plan(labels, sequences)
    columns = {"today": ROOT, **({"baseline": baseline} if baseline else {})}
    data: dict[str, Any] = {"sequences": len(sequences), "columns": {}, "cases": {}, "starts": {}}
    judgedby: dict[str, dict[str, list[Any]]] = {}
    for column, checkout in columns.items():
        if progress:
            progress(f"replaying {len(sequences)} sequences with {checkout}")
        judgedby[column] = judged(labels, sequences, replay_with(checkout, the_plan))
        rows = judgedby[column]
        data["columns"][column] = {
            "checkout": str(checkout),
            "startup": figures(rows["startup"]),
            "compact": figures(rows["compact"], rows["startup"]),
        }
        data["cases"][column] = {s: by_case(rows[s]) for s in SOURCES}
        data["starts"][column] = {s: [_start(r) for r in rows[s]] for s in SOURCES}
    data["sessions"] = sum(kind == "session" for q in sequences for kind, _ in q.steps)
    data["case_sequences"] = {
        c: sum(c in q.cases for q in sequences)
        for c in sorted({c for q in sequences for c in q.cases})
    }
    data["timing"] = {
        "seconds": round(time.perf_counter() - started, 1),
        "load_before": load_before,
        "load_after": uptime(),
    }
    from .story_report import report

    return report(data, judgedby if verbose else None), data
