"""Does the store stay bounded over many sessions (benchmark ``growth``)?

Simulated sessions of several turns each go through the Stop hook's path: a transcript grown
turn by turn and read on (:class:`.truth_replay.Replay`), the turn's digest handed to
``checkpoint_turn`` (what ``server.hook_tools.do_checkpoint_turn`` calls), then the embedding
queue drained as the server's indexer does, with a synthetic embedder (a vector seeded by the
text: the store's bytes, not meaning, are measured). Sessions are spread over ``days`` (their
rows dated back), one automatic backup taken a simulated day (``daily_backup``, the server's),
so the horizon and the backup caps apply. The database's size and the session start (its
story gathered and rendered, uncached: what the SessionStart hook does when the cache is
stale; median of ``runs``) are measured after the first session, after
:data:`~mama_plugin.services.story.resume.RECENT` (the checkpoints the start reads: from
there its work no longer grows with the sessions), after the last, and after ``gc``
(``services.story.gc.collect``), whose work is reported.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.services.hygiene import gc
from mama_plugin.services.search import indexing
from mama_plugin.services.story import briefing
from mama_plugin.services.story.resume import RECENT
from mama_plugin.storage import Store, now_ms
from mama_plugin.storage.backup import backups, backups_bytes, daily_backup
from mama_plugin.storage.space import space

from .truth_replay import Replay

DAY_MS = 24 * 3600 * 1000


class Seeded:
    """A synthetic embedding model: a unit vector seeded by the text's hash."""

    name = "seeded"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            rng = random.Random(hashlib.sha1(text.encode()).digest())
            raw = [rng.uniform(-1.0, 1.0) for _ in range(self.dim)]
            norm = sum(x * x for x in raw) ** 0.5 or 1.0
            out.append([x / norm for x in raw])
        return out


def turn_lines(session: int, turn: int, cwd: str) -> list[dict[str, Any]]:
    """One turn of a transcript: a request, an edit, a test run that passes, a closing line."""
    path = f"src/area_{session % 40}/module_{turn % 7}.py"
    ids = (f"e{session}-{turn}", f"b{session}-{turn}")

    def result(call: str, text: str) -> dict[str, Any]:
        content = [{"type": "tool_result", "tool_use_id": call, "content": text}]
        return {"type": "user", "message": {"role": "user", "content": content}}

    def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}

    request = f"session {session}, step {turn}: make {path} retry when the upstream times out"
    edit = {"file_path": f"{cwd}/{path}", "old_string": "call()", "new_string": "retry(call)"}
    test = {"command": f"pytest tests/test_module_{turn % 7}.py -q", "description": "run tests"}
    said = (
        f"{path} now retries on timeouts; the tests pass. Next: cover the backoff of step {turn}."
    )
    return [
        {"type": "user", "cwd": cwd, "message": {"role": "user", "content": request}},
        assistant({"type": "tool_use", "id": ids[0], "name": "Edit", "input": edit}),
        result(ids[0], "The file has been updated."),
        assistant({"type": "tool_use", "id": ids[1], "name": "Bash", "input": test}),
        result(ids[1], f"{3 + turn % 5} passed in 0.4s"),
        assistant({"type": "text", "text": said}),
    ]


def measure(store: Store, project: str, config: Config, runs: int) -> dict[str, Any]:
    """The database's size and the uncached session start's latency (median, min, max)."""
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    timings = []
    for _ in range(runs + 1):  # the first warms the caches and is not counted
        started = time.perf_counter()
        facts = briefing.gather(
            store, project, followup_days=config.settings.outcome_followup_days, now=now_ms()
        )
        if facts is not None:
            briefing.render_brief(
                facts, config.home, budget=config.settings.session_start_tokens, short=False
            )
        timings.append((time.perf_counter() - started) * 1000)
    held = space(store)
    return {
        "memories": store.memories.counts()["memories"],
        "db_bytes": held.file_bytes,
        "free_bytes": held.free_bytes,
        "backups": len(backups(store.path)),
        "backups_bytes": backups_bytes(store.path),
        "start_p50_ms": round(statistics.median(timings[1:]), 2),
        "start_min_ms": round(min(timings[1:]), 2),
        "start_max_ms": round(max(timings[1:]), 2),
    }


def simulate(
    sessions: int,
    turns: int,
    *,
    days: int,
    runs: int = 7,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the sessions in a fresh store, then ``gc``; every figure."""
    with tempfile.TemporaryDirectory(prefix="mama-growth-") as tmp:
        home = Path(tmp)
        config = Config(home)
        cwd = str(home / "project")
        embedder = Seeded(config.settings.embedding_dim)
        figures: dict[str, Any] = {"sessions": sessions, "turns": turns, "days": days}
        with Store.open(home / "mama.db", config=config) as store:
            now, per_day = now_ms(), max(sessions / max(days, 1), 1e-9)
            for s in range(sessions):
                replay = Replay(store, cwd, f"session-{s}", home / "t.jsonl", baseline=False)
                for t in range(turns):
                    entries: list[dict[str, Any] | None] = [*turn_lines(s, t, cwd)]
                    replay.turn([json.dumps(e).encode() for e in entries], entries)
                    indexing.drain(store, embedder)
                age = int((sessions - 1 - s) / per_day * DAY_MS)
                _date_back(store, f"session-{s}", age)
                day = (sessions - 1 - s) // per_day
                if s == 0 or day != (sessions - s) // per_day:  # a new simulated day
                    daily_backup(store, now=(now - age) / 1000, keep=_keep(config))
                if s == 0:
                    figures["first"] = measure(store, cwd, config, runs)
                if s + 1 == min(RECENT, sessions):  # the start reads a full window from here
                    figures["start"] = measure(store, cwd, config, runs)
                if progress and (s + 1) % max(sessions // 10, 1) == 0:
                    progress(f"{s + 1} sessions")
            figures["end"] = measure(store, cwd, config, runs)
            started = time.perf_counter()
            done = gc.collect(store, config.settings, now=now)
            figures["gc"] = done.as_dict() | {"s": round(time.perf_counter() - started, 3)}
            figures["after_gc"] = measure(store, cwd, config, runs)
            figures["kept_row_bytes"] = _row_bytes(store)
    return figures


def _keep(config: Config) -> int:
    return config.settings.backups_max_count


def _date_back(store: Store, session: str, age_ms: int) -> None:
    """Date a session's memories ``age_ms`` back, as if it ran then."""
    with store.transaction():
        store.conn.execute(
            "UPDATE memories SET created_at = created_at - ?, updated_at = updated_at - ? "
            "WHERE session_id = ?",
            (age_ms, age_ms, session),
        )


def _row_bytes(store: Store) -> int:
    """What the kept memories' columns hold, as text (the floor the file is compared with)."""
    value = store.conn.execute(
        "SELECT sum(length(topic) + length(content) + length(specifics) + length(evidence) "
        "+ length(reasoning) + length(tension) + length(continuity) + length(outcome) "
        "+ length(tags) + length(metadata)) FROM memories"
    ).fetchall()[0][0]
    return int(value or 0)


def growth_run(
    sessions: int,
    turns: int,
    *,
    days: int,
    runs: int = 7,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The benchmark: the text to print and every figure."""
    f = simulate(sessions, turns, days=days, runs=runs, progress=progress)
    lines = [
        f"Growth: {sessions} sessions × {turns} turns through the Stop hook's checkpoint, over "
        f"{days} days; session start = its story gathered and rendered, uncached "
        f"(median, min–max of {runs} runs); start = after {min(RECENT, sessions)} sessions, "
        "the checkpoints the start reads",
        f"{'':9} {'memories':>8} {'DB MB':>7} {'free MB':>7} {'backups':>12} "
        f"{'start ms':>8} {'min–max':>13}",
    ]
    for name in ("first", "start", "end", "after_gc"):
        r = f[name]
        lines.append(
            f"{name.replace('_', ' '):9} {r['memories']:>8} {r['db_bytes'] / 1e6:>7.2f} "
            f"{r['free_bytes'] / 1e6:>7.2f} {r['backups']:>3} {r['backups_bytes'] / 1e6:>5.1f} MB "
            f"{r['start_p50_ms']:>8.2f} {r['start_min_ms']:>6.2f}–{r['start_max_ms']:<6.2f}"
        )
    g, end = f["gc"], f["end"]
    rewrite = "not needed" if g["vacuum_s"] is None else f"{g['vacuum_s'] * 1000:.0f} ms"
    lines += [
        f"gc: {g['folded']} checkpoints folded into {g['sessions']} sessions' one, "
        f"{len(g['backups_deleted'])} backups deleted ({g['backup_bytes'] / 1e6:.1f} MB), "
        f"rewrite {rewrite}; {g['s'] * 1000:.0f} ms in all",
        f"kept: {end['memories']} memories for {sessions} sessions "
        f"({end['memories'] / max(sessions, 1):.2f} a session, whatever the turns); the file is "
        f"{f['after_gc']['db_bytes'] / max(f['kept_row_bytes'], 1):.1f}× their columns' "
        f"{f['kept_row_bytes'] / 1e6:.2f} MB (indexes, full text, vectors)",
    ]
    return "\n".join(lines) + "\n", f
