"""Done detection in benchmark ``answers``: is remaining work that later work shows done left out?

After every turn of the replayed story, every next step that a current memory holds (each
current decision, and each session's checkpoint updated last, as the answers fold them) is
a line "Remains:" could show. ``answers_done.json`` labels each line with the point where its
work was really done (or none). A rule set *drops* a line when ``open_steps`` leaves it out:

- a dropped line that was done is right; a dropped line still open is **wrongly dropped**
  (work hidden: the worse error); a shown line that was done is **stale**;
- precision = right drops / all drops, recall = right drops / lines done by then;
- counted over (turn, line) pairs and over distinct lines (a line counts as wrongly dropped
  if it was ever dropped while open, as stale if it was ever shown once done).

Each rule of :mod:`services.story.done` is measured alone and within the default set; the labels
were written by the rules' author (see the JSON's ``about``).
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.services.story.freshness import LATER, moot, one_per_session, open_steps
from mama_plugin.services.story.rules import DEFAULT, RULES, Similar
from mama_plugin.services.story.words import covers
from mama_plugin.storage import MemoryRecord, Store
from mama_plugin.transcript.turns import turn_digests

from .checkout import DATA, FIXTURES

LABELS = DATA / "answers_done.json"
START = "at the start (said + decisions + moot_all, whole steps)"


def load_labels(path: Path = LABELS) -> dict[str, tuple[str, int] | None]:
    """Each labelled step (lower case) → the (session, turn) that did it, or None if open."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        s["step"].lower(): (str(s["done_at"][0]), int(s["done_at"][1])) if s["done_at"] else None
        for s in data["steps"]
    }


def similarity(embedder: EmbeddingModel) -> Similar:
    """The best cosine of a text against others, each text embedded once."""
    vectors: dict[str, list[float]] = {}

    def unit(text: str) -> list[float]:
        if text not in vectors:
            v = embedder.embed([text])[0]
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            vectors[text] = [x / norm for x in v]
        return vectors[text]

    def similar(text: str, others: Sequence[str]) -> float:
        a = unit(text)
        return max(
            (sum(x * y for x, y in zip(a, unit(o), strict=True)) for o in others), default=0.0
        )

    return similar


class DoneTally:
    """Predictions of every rule set after every turn, against the labels."""

    def __init__(self, embedder: EmbeddingModel | None = None) -> None:
        self.labels = load_labels()
        self.similar = similarity(embedder) if embedder is not None else None
        # Every rule of the one table, alone (``meaning`` only with an embedder).
        rules = [r.name for r in RULES if r.name != "meaning" or embedder is not None]
        self.sets: dict[str, tuple[str, ...]] = {
            START: (),
            **{f"{r} alone": (r,) for r in rules},
            "default (" + " + ".join(DEFAULT) + ")": DEFAULT,
            "default + files": (*DEFAULT, "files"),
            "default + last": (*DEFAULT, "last"),
            "default without asked and refined": tuple(
                r for r in DEFAULT if r not in ("asked", "refined")
            ),
            **({"default + meaning": (*DEFAULT, "meaning")} if embedder is not None else {}),
        }
        self.order: list[tuple[str, int]] = []
        self.pairs: dict[str, list[tuple[str, bool, bool]]] = {k: [] for k in self.sets}

    def observe(self, store: Store, project: str, name: str, turn: int) -> None:
        """Judge every rule set's "Remains" lines as the store stands after this turn."""
        self.order.append((name, turn))
        kinds = ("decision", "checkpoint")
        current = [m for m in store.memories.iter(project=project)
                   if m.status != "superseded" and m.type in kinds]  # fmt: skip
        holders = [m for m, _, _ in one_per_session([(m, 0) for m in current])]
        lines = {str(s.get("step", "") if isinstance(s, dict) else s).lower()
                 for m in holders for s in m.continuity.get("next_steps") or []} - {""}  # fmt: skip
        unlabelled = sorted(lines - set(self.labels))
        if unlabelled:
            raise MamaError(f"answers_done.json has no label for {unlabelled}: label them")
        for key, rules in self.sets.items():
            shown = _shown(store, holders, rules, self.similar)
            for line in sorted(lines):
                at = self.labels[line]
                done = at is not None and at in self.order
                self.pairs[key].append((line, line not in shown, done))

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per rule set: right drops, wrongly dropped, stale, precision, recall (pairs, lines)."""
        return figures(self.pairs)

    def report(self, story: dict[str, dict[str, Any]], split: dict[str, dict[str, Any]]) -> str:
        """The tables the ``answers`` benchmark prints: the story, then the split recordings."""
        done = sum(1 for at in self.labels.values() if at)
        first = next(iter(story.values()))
        out = [
            f"done detection after every turn of the story ({len(self.order)} turns; "
            f"{len(self.labels)} labelled steps, {done} done by the end, labelled by the rules' "
            f"author: answers_done.json; {first['pairs']} (turn, line) pairs)",
            "",
            *_table(story),
        ]
        steps = sum(len(v) for v in load_recordings().values())
        done = sum(1 for v in load_recordings().values() for at in v.values() if at)
        first = next(iter(split.values()))
        out += [
            "",
            f"done detection on the recordings cut in two (each session cut after every turn, the "
            f"rest replayed as a new session; {steps} labelled steps, {done} done in their "
            f"recording, labelled by the rules' author; {first['pairs']} (cut, turn, line) pairs)",
            "",
            *_table(split),
        ]
        return "\n".join(out) + "\n"


def figures(every: dict[str, list[tuple[str, bool, bool]]]) -> dict[str, dict[str, Any]]:
    """Per rule set, from its (line, dropped, done) pairs: precision, recall and the errors."""
    out = {}
    for key, pairs in every.items():
        right = sum(1 for _, dropped, done in pairs if dropped and done)
        wrong = sum(1 for _, dropped, done in pairs if dropped and not done)
        stale = sum(1 for _, dropped, done in pairs if not dropped and done)
        lines_done = {line for line, _, done in pairs if done}
        out[key] = {
            "pairs": len(pairs),
            "right": right,
            "wrongly_dropped": wrong,
            "stale": stale,
            "precision": right / (right + wrong) if right + wrong else None,
            "recall": right / (right + stale) if right + stale else None,
            "lines_wrongly_dropped": sorted({ln for ln, d, done in pairs if d and not done}),
            "lines_stale": sorted({ln for ln, d, done in pairs if not d and done}),
            "lines_done": len(lines_done),
            "lines": len({line for line, _, _ in pairs}),
        }
    return out


def _table(figures: dict[str, dict[str, Any]]) -> list[str]:
    out = [
        "| rules | precision | recall | wrongly dropped (lines) | stale (lines) |",
        "|---|---|---|---|---|",
    ]
    for key, f in figures.items():
        out.append(
            f"| {key} | {_ratio(f['precision'])} | {_ratio(f['recall'])} | "
            f"{f['wrongly_dropped']} ({len(f['lines_wrongly_dropped'])}) | "
            f"{f['stale']} ({len(f['lines_stale'])}/{f['lines_done']}) |"
        )
    return out


def load_recordings(path: Path = LABELS) -> dict[str, dict[str, int | None]]:
    """Per recorded session: each step (lower case) → the turn that did it, or None."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: {step.lower(): at for step, at in steps.items()}
            for name, steps in data["recordings"].items()}  # fmt: skip


def _turn_starts(lines: list[bytes]) -> list[int]:
    """The indexes of the lines where a user's request begins a turn."""
    starts = []
    for k, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "user" or entry.get("isMeta"):
            continue
        content = (entry.get("message") or {}).get("content")
        if isinstance(content, list):
            blocks = [b for b in content if isinstance(b, dict)]
            if any(b.get("type") == "tool_result" for b in blocks):
                continue
            content = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        if isinstance(content, str) and content.strip() and not content.startswith("<"):
            starts.append(k)
    return starts


def split_run(
    sets: dict[str, tuple[str, ...]], similar: Similar | None = None, folder: Path = FIXTURES
) -> dict[str, list[tuple[str, bool, bool]]]:
    """Every rule set's (line, dropped, done) pairs over the recordings cut in two."""
    pairs: dict[str, list[tuple[str, bool, bool]]] = {k: [] for k in sets}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with Store.open(home / "mama.db", config=Config(home)) as store:
            for name, labels in load_recordings().items():
                path = folder / f"{name}.jsonl"
                lines = path.read_bytes().split(b"\n")
                starts = _turn_starts(lines)
                first = turn_digests(path)
                if len(starts) != len(first):
                    raise MamaError(f"{path}: {len(starts)} requests but {len(first)} turns")
                for cut in range(1, len(first)):
                    project = f"/split/{name}/{cut}"
                    for digest in first[:cut]:  # the first session, turn by turn
                        held = checkpoint_turn(store, project, session_id=f"{project}/a",
                                               digest=digest)  # fmt: skip
                    rest = home / "rest.jsonl"
                    rest.write_bytes(b"\n".join(lines[: starts[0]] + lines[starts[cut] :]))
                    steps = [str(x.get("step", "")) for x in (held.continuity if held else {})
                             .get("next_steps") or []]  # fmt: skip
                    unlabelled = sorted({x.lower() for x in steps} - set(labels))
                    if unlabelled or held is None:
                        raise MamaError(f"answers_done.json: no label in {name} for {unlabelled}")
                    for turn, digest in enumerate(turn_digests(rest), cut + 1):
                        checkpoint_turn(store, project, session_id=f"{project}/b", digest=digest)
                        for key, rules in sets.items():
                            shown = _shown(store, [held], rules, similar)
                            for step in {x.lower() for x in steps}:
                                at = labels[step]
                                done = at is not None and at <= turn
                                pairs[key].append((step, step not in shown, done))
    return pairs


def _shown(
    store: Store, holders: list[MemoryRecord], rules: tuple[str, ...], similar: Similar | None
) -> set[str]:
    """The steps (lower case) "Remains" would show; ``()``: the rules at this bench's start."""
    if rules:
        return {s.step.lower() for s in open_steps(store, holders, rules=rules,
                                                      similar=similar)}  # fmt: skip
    shown = set()
    for m in holders:  # a whole step, covered by a later done item or decision; moot: all
        if moot(store, m):
            continue
        said: list[str] = []
        for kind in ("checkpoint", "decision"):
            for o in store.memories.latest(project=m.project, type=kind, limit=LATER):
                if (o.updated_at, o.seq) > (m.updated_at, m.seq):
                    said += [o.content] if kind == "decision" else o.continuity.get("done") or []
        for s in m.continuity.get("next_steps") or []:
            text = str(s.get("step", "") if isinstance(s, dict) else s)
            if not any(covers(str(d), text) for d in said):
                shown.add(text.lower())
    return shown


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
