"""Done detection in ``mama bench answers``: is remaining work that later work shows done left out?

After every turn of the replayed story, every next step that a current memory holds (each
current decision, and each session's checkpoint updated last, as the answers fold them) is
a line "Remains:" could show. ``answers_done.json`` labels each line with the point where its
work was really done (or none). A rule set *drops* a line when ``open_steps`` leaves it out:

- a dropped line that was done is right; a dropped line still open is **wrongly dropped**
  (work hidden: the worse error); a shown line that was done is **stale**;
- precision = right drops / all drops, recall = right drops / lines done by then;
- counted over (turn, line) pairs and over distinct lines (a line counts as wrongly dropped
  if it was ever dropped while open, as stale if it was ever shown once done).

Each rule of :mod:`services.done` is measured alone and within the default set; the labels
were written by the rules' author (see the JSON's ``about``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import MamaError
from ..services.done import DEFAULT, Similar
from ..services.freshness import one_per_session, open_steps
from ..services.retrieval import EmbeddingModel
from ..storage import Store

LABELS = Path(__file__).with_name("answers_done.json")
START = ("said", "decisions", "moot_all")  # the rules this bench was first run against


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
        rules = ["said", "tasks", "commands", "phrases", "files", "decisions", "moot",
                 "moot_all"] + (["meaning"] if embedder is not None else [])  # fmt: skip
        self.sets: dict[str, tuple[str, ...]] = {
            "at the start (said + decisions + moot_all)": START,
            **{f"{r} alone": (r,) for r in rules},
            "default (" + " + ".join(DEFAULT) + ")": DEFAULT,
            "default + files": (*DEFAULT, "files"),
            "default + decisions": (*DEFAULT, "decisions"),
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
            told = open_steps(store, holders, rules=rules, similar=self.similar)
            shown = {s["step"].lower() for s in told}
            for line in sorted(lines):
                at = self.labels[line]
                done = at is not None and at in self.order
                self.pairs[key].append((line, line not in shown, done))

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per rule set: right drops, wrongly dropped, stale, precision, recall (pairs, lines)."""
        out = {}
        for key, pairs in self.pairs.items():
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

    def report(self, figures: dict[str, dict[str, Any]]) -> str:
        """The table ``mama bench answers`` prints."""
        done = sum(1 for at in self.labels.values() if at)
        first = next(iter(figures.values()))
        out = [
            f"done detection after every turn ({len(self.order)} turns; {len(self.labels)} "
            f"labelled steps, {done} done by the end, labelled by the rules' author: "
            f"answers_done.json; {first['pairs']} (turn, line) pairs, "
            f"{first['lines']} distinct lines)",
            "",
            "| rules | precision | recall | wrongly dropped (lines) | stale (lines) |",
            "|---|---|---|---|---|",
        ]
        for key, f in figures.items():
            out.append(
                f"| {key} | {_ratio(f['precision'])} | {_ratio(f['recall'])} | "
                f"{f['wrongly_dropped']} ({len(f['lines_wrongly_dropped'])}) | "
                f"{f['stale']} ({len(f['lines_stale'])}/{f['lines_done']}) |"
            )
        return "\n".join(out) + "\n"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
