"""Benchmark ``answers``: how the default ``search_by_context`` answer grows, session by session.

A store grows through the real save paths: each recorded Claude Code session of the price
service (``tests/fixtures/transcripts/turns_*.jsonl``) is replayed turn by turn through the
Stop hook's rolling checkpoint (:func:`services.story.autosave.checkpoint_turn`, on the transcript
as it stood when each turn ended), and the decisions, outcomes, supersedes and checkpoints a
user would have saved along the way go through ``save_decision``, ``record_outcome_event``
and ``save_checkpoint`` (``answers_story.json``). After every session the same questions are asked,
and each default answer is read twice in the same run: as main composed it
(``baselines/answers_before_freshness.py``) and as ``services/story/answers.py`` composes it now.

Each answer's text is judged from the text itself, the same way for both:

- tokens (``estimate_tokens``: one per four characters);
- **auto in stands now**: lines under "Stands now:" that tell an automatic checkpoint;
- **done in remains**: lines under "Remains:" naming a step the script marks done by then
  (``answers_story.json``: a substring of the step, the session and turn that did it), the
  parts a line itself says are "done since" aside;
- **repeated entries**: listed results that are a second checkpoint of a session already
  listed, or an outcome event whose decision is listed too.

The script and the done labels were written for this benchmark by the author of the answer
rules, after reading the transcripts: a smoke test of those rules, not a measure on outside data.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.story.answers import ANSWER_TOKENS, search_by_context
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.storage import Store
from mama_plugin.text import estimate_tokens
from mama_plugin.transcript.turns import turn_digests

from .answers_done import DoneTally, figures, split_run
from .baselines.answers_before_freshness import answer_today
from .checkout import DATA, FIXTURES

PROJECT = "/bench/price-service"
REPEATS = 5  # timed answers per question and session (the first is judged)
QUESTIONS = (
    "Where did we leave the price service?",
    "How does the cache evict entries?",
    "Why does the smoke test fail?",
)
STORY = DATA / "answers_story.json"


def load_story(path: Path = STORY) -> tuple[list[tuple[str, dict[int, list[Any]]]], list[Any]]:
    """The scripted sessions (name, actions after each turn) and the labelled done steps.

    An action is ``["decide", key, fields]``, ``["supersede", key, old key, fields]``,
    ``["outcome", decision key, fields]`` or ``["checkpoint", fields, [decision keys]]``.
    """
    story = json.loads(path.read_text(encoding="utf-8"))
    sessions = [(s["name"], {int(t): a for t, a in s["after_turn"].items()})
                for s in story["sessions"]]  # fmt: skip
    return sessions, [(d["step"], d["session"], d["turn"]) for d in story["done"]]


@dataclass
class Judged:
    """One answer, judged from its text."""

    tokens: int
    stands: int
    auto_in_stands: int
    remains: int
    done_in_remains: int
    listed: int
    repeated: int


def section(text: str, header: str) -> list[str]:
    """The "- " lines under ``header`` up to the next header or blank line."""
    lines = text.splitlines()
    if header not in lines:
        return []
    out = []
    for line in lines[lines.index(header) + 1 :]:
        if not line.startswith("- "):
            break
        out.append(line[2:])
    return out


_LISTED = re.compile(r"\b((?:dec|chk|ins|ctx)_[0-9a-z]{10,})\b")


def judge(store: Store, text: str, ranked: list[str], done: list[str]) -> Judged:
    """Count an answer's stale entries (``ranked``: the ids its list names, in order)."""
    stands = section(text, "Stands now:")
    autos = [m.content[:60] for m in store.memories.iter(project=PROJECT) if m.rolling]
    auto_in = sum(1 for line in stands if any(a in line for a in autos))
    remains = section(text, "Remains:")
    left = [line.split("done since:", 1)[0].lower() for line in remains]  # a done part is told
    done_in = sum(1 for line in left if any(d in line for d in done))
    found = store.memories.get_many(ranked)
    sessions: set[str] = set()
    repeated = 0
    events = {}
    for m in found.values():
        for ln in store.links.of(m.id, direction="out", categories=("implementation",)):
            if ln.relationship == "outcome_of":
                events[m.id] = ln.to_id
    for i in ranked:
        m = found[i]
        if m.type == "checkpoint" and m.session_id:
            repeated += m.session_id in sessions
            sessions.add(m.session_id)
        repeated += events.get(i) in found
    return Judged(estimate_tokens(text), len(stands), auto_in, len(remains), done_in,
                  len(ranked), repeated)  # fmt: skip


def _act(store: Store, action: tuple[Any, ...], ids: dict[str, str], session: str) -> None:
    kind = action[0]
    if kind == "decide":
        ids[action[1]] = save_decision(
            store, PROJECT, {**action[2], "session_id": session}
        ).memory.id
    elif kind == "supersede":
        fields = {**action[3], "supersedes": ids[action[2]], "session_id": session}
        ids[action[1]] = save_decision(store, PROJECT, fields).memory.id
    elif kind == "outcome":
        record_outcome_event(store, parse(OutcomeInput, {**action[2], "memory_id": ids[action[1]]}))
    else:
        fields = {**action[1], "implements": [ids[k] for k in action[2]], "session_id": session}
        save_checkpoint(store, PROJECT, fields)


def replay(
    store: Store, embedder: EmbeddingModel | None = None, folder: Path = FIXTURES
) -> Iterator[tuple[int, str, int, bool]]:
    """Replay the story into ``store``; yield (session number, name, turn, last turn) after
    every turn, its saves made (and, after a session's last turn, its memories embedded)."""
    ids: dict[str, str] = {}
    for number, (name, actions) in enumerate(load_story()[0], 1):
        path = folder / f"{name}.jsonl"
        digests = turn_digests(path) if name.startswith("turns_") else [None]
        if not digests:
            raise MamaError(f"no turns in {path}: is the transcript fixture there?")
        session = f"bench-session-{number}"
        for turn, digest in enumerate(digests, 1):
            if digest is not None:
                checkpoint_turn(store, PROJECT, session_id=session, digest=digest)
            for action in actions.get(turn, []):
                _act(store, action, ids, session)
            last = turn == len(digests)
            if last and embedder is not None:
                drain(store, embedder)
            yield number, name, turn, last


def answers_run(
    embedder: EmbeddingModel | None = None, folder: Path = FIXTURES
) -> tuple[str, dict[str, Any]]:
    """Grow the store session by session; judge the default answers before and after, and
    the done detection after every turn (:mod:`.answers_done`).

    With an ``embedder`` each session's memories are embedded before the questions, as the
    server does between sessions, and both answers search by keywords and meaning.
    """
    rows: list[dict[str, Any]] = []
    times: dict[str, list[float]] = {"before": [], "after": []}
    load = os.getloadavg()[0]
    labels = load_story()[1]
    tally = DoneTally(embedder)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with Store.open(home / "mama.db", config=Config(home)) as store:
            happened: list[tuple[str, int]] = []
            for number, name, turn, last in replay(store, embedder, folder):
                happened.append((name, turn))
                tally.observe(store, PROJECT, name, turn)
                if not last:
                    continue
                done = [d for d, s, t in labels if (s, t) in happened]
                row: dict[str, Any] = {"session": number, "name": name}
                answers: dict[str, list[Judged]] = {"before": [], "after": []}
                for question in QUESTIONS:
                    for repeat in range(REPEATS):  # the two answers take turns, same load
                        for label, ask in (("before", _before), ("after", _after)):
                            started = time.perf_counter()
                            text, ranked = ask(store, question, embedder)
                            times[label].append((time.perf_counter() - started) * 1000)
                            if not repeat:
                                answers[label].append(judge(store, text, ranked, done))
                row |= {label: _sum(judged) for label, judged in answers.items()}
                rows.append(row)
    model: str | None = getattr(embedder, "name", None)
    timing: dict[str, Any] = {label: {"median_ms": statistics.median(ms), "p95_ms": _p95(ms)}
                              for label, ms in times.items()}  # fmt: skip
    timing["load_average"] = [load, os.getloadavg()[0]]
    story = tally.figures()
    split = figures(split_run(tally.sets, tally.similar, folder))
    data = {"budget": ANSWER_TOKENS, "questions": QUESTIONS, "sessions": rows, "embedder": model,
            "timing": timing, "done_detection": {"story": story, "split": split}}  # fmt: skip
    return _report(rows, model, timing) + "\n" + tally.report(story, split), data


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def _before(store: Store, question: str, embedder: Any) -> tuple[str, list[str]]:
    return answer_today(store, question, embedder=embedder, project=PROJECT)


def _after(store: Store, question: str, embedder: Any) -> tuple[str, list[str]]:
    result = search_by_context(
        store, question, embedder=embedder, project=PROJECT, record_usage=False
    )
    return result.text, [r.id for r in result.primary_results]


def _sum(judged: list[Judged]) -> dict[str, Any]:
    total = {k: sum(getattr(j, k) for j in judged) for k in Judged.__dataclass_fields__}
    total["tokens_median"] = statistics.median(j.tokens for j in judged)
    total["tokens_max"] = max(j.tokens for j in judged)
    total["stale"] = total["auto_in_stands"] + total["done_in_remains"] + total["repeated"]
    total["entries"] = total["stands"] + total["remains"] + total["listed"]
    return total


def _share(n: int, of: int) -> str:
    return f"{n}/{of}" + (f" ({n / of:.0%})" if of else "")


def _report(rows: list[dict[str, Any]], model: str | None, timing: dict[str, Any]) -> str:
    out = [
        f"search_by_context default answers ({len(QUESTIONS)} questions a session; budget "
        f"{ANSWER_TOKENS} tokens; {'vectors: ' + model if model else 'keywords only'}), "
        "before (main's answers) → after",
        "",
        "| session | tokens median (max) | auto in stands now | done in remains | "
        "repeated entries | stale entries |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, a = r["before"], r["after"]
        out.append(
            f"| {r['session']} {r['name']} | {b['tokens_median']:g} ({b['tokens_max']}) → "
            f"{a['tokens_median']:g} ({a['tokens_max']}) | "
            f"{_share(b['auto_in_stands'], b['stands'])} → "
            f"{_share(a['auto_in_stands'], a['stands'])} | "
            f"{_share(b['done_in_remains'], b['remains'])} → "
            f"{_share(a['done_in_remains'], a['remains'])} | "
            f"{_share(b['repeated'], b['listed'])} → {_share(a['repeated'], a['listed'])} | "
            f"{_share(b['stale'], b['entries'])} → {_share(a['stale'], a['entries'])} |"
        )
    b, a = timing["before"], timing["after"]
    out += [
        "",
        f"time per answer: before median {b['median_ms']:.1f} ms (p95 {b['p95_ms']:.1f}), "
        f"after median {a['median_ms']:.1f} ms (p95 {a['p95_ms']:.1f}); load average "
        f"{timing['load_average'][0]:.1f} at the start, {timing['load_average'][1]:.1f} at the end",
    ]
    return "\n".join(out) + "\n"
