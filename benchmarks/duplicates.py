"""The ``duplicates`` benchmark: where a save's nearest memory is claimed a near-duplicate.

On public data nobody on this team wrote, through the product's own look-up
(:func:`mama_plugin.services.saving.duplicates.nearest`, the one a save calls):

- **Stack Overflow** (``recall_tech.json``): the store holds the title of every question a
  group of duplicates repeats; each other duplicate's title is saved against it (a
  duplicate: its nearest memory must be the one it repeats), and so is each title of a group
  with no memory stored (not a duplicate of anything stored: any claim is false).
- **KLUE-STS** (``recall_klue_sts.json``, Korean, scored 0–5 by people): the store holds every
  pair's first sentence; each second sentence is saved against it. A pair scored at least
  ``DUPLICATE_SCORE`` is a duplicate, one under ``DISTINCT_SCORE`` is not (in between:
  left out). A model that cannot read Korean claims nothing on it; its pair cosines are
  printed to show why.

For each model installed (the configured one, multilingual-e5, all-mpnet-base-v2): the
cosines of duplicates with what they repeat and of other saves with their nearest memory,
then at each candidate bar the claims made, precision, recall, and the share of saves that
repeat nothing stored that were claimed anyway (false claims). A bar is chosen for few false
claims: a wrong "this is a duplicate" costs more than a miss.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.cards import reads_korean
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.services.saving import duplicates
from mama_plugin.services.saving.memories import save_insight
from mama_plugin.services.search import indexing
from mama_plugin.storage import Store

from .recall_core import fmt
from .recall_data import KLUE, TECH

PROJECT = "/bench/duplicates"
BARS = (0.7, 0.75, 0.8, 0.825, 0.85, 0.875, 0.9, 0.925, 0.95)
DUPLICATE_SCORE = 4.0  # KLUE-STS: "the same meaning, details aside" and above
DISTINCT_SCORE = 3.0  # under it: people read the two as saying different things


@dataclass(frozen=True)
class Save:
    """One text saved against a store: the stored key it repeats (None: nothing stored)."""

    text: str
    repeats: str | None


@dataclass(frozen=True)
class Source:
    """One data set: what the store holds (key → text) and what is saved against it."""

    name: str
    korean: bool
    stored: dict[str, str]
    saves: list[Save]


def tech(path: Path = TECH) -> Source:
    """Stack Overflow: stored the repeated titles; saved their duplicates and other groups'."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    stored: dict[str, str] = {}
    saves: list[Save] = []
    for memory_id, memory, _how, _prompt_id, prompt in data["pairs"]:
        stored.setdefault(memory_id, memory)
        saves.append(Save(prompt, memory_id))
    saves += [Save(prompt, None) for _prompt_id, prompt in data["unrelated"]]
    return Source("Stack Overflow duplicate titles", False, stored, saves)


def klue(path: Path = KLUE) -> Source:
    """KLUE-STS: every first sentence stored; second sentences saved, by their score."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    stored: dict[str, str] = {}
    saves: list[Save] = []
    for guid, _source, first, second, score in data["pairs"]:
        stored[guid] = first
        if score >= DUPLICATE_SCORE:
            saves.append(Save(second, guid))
        elif score < DISTINCT_SCORE:
            saves.append(Save(second, None))
    return Source("KLUE-STS v1.1 dev (Korean)", True, stored, saves)


@dataclass(frozen=True)
class Looked:
    """What the look-up found for one save: the nearest key and cosine (None: nothing)."""

    save: Save
    key: str | None
    cosine: float | None

    @property
    def right(self) -> bool:
        return self.save.repeats is not None and self.key == self.save.repeats


def look_up(home: Path, source: Source, embedder: EmbeddingModel) -> list[Looked]:
    """Every save of ``source`` looked up in a store of its stored texts, as a save does."""
    store = Store.open(home / "duplicates.db", config=Config(home))
    try:
        keys: dict[str, str] = {}
        with store.transaction():
            for key, text in source.stored.items():
                saved = save_insight(store, PROJECT, {"content": text})
                keys[saved.memory.id] = key
        indexing.drain(store, embedder)
        out = []
        for save in source.saves:
            near = duplicates.nearest(
                store, embedder, project=PROJECT, kind="insight", text=save.text
            )
            found = (keys[near.memory.id], near.cosine) if near is not None else (None, None)
            out.append(Looked(save, *found))
        return out
    finally:
        store.close()


def pair_cosines(source: Source, embedder: EmbeddingModel) -> dict[str, list[float]]:
    """Each save's cosine with the text it repeats (duplicates) or was paired with (others)."""
    out: dict[str, list[float]] = {"duplicate": [], "distinct": []}
    if source.name.startswith("Stack"):
        return out  # its other saves have no pair: their nearest memory is the figure
    data: dict[str, Any] = json.loads(KLUE.read_text(encoding="utf-8"))
    for _guid, _source, first, second, score in data["pairs"]:
        if score >= DUPLICATE_SCORE or score < DISTINCT_SCORE:
            a, b = embedder.embed([first, second])
            cosine = sum(x * y for x, y in zip(a, b, strict=True))
            out["duplicate" if score >= DUPLICATE_SCORE else "distinct"].append(cosine)
    return out


def at_bars(looked: Sequence[Looked], bars: Sequence[float] = BARS) -> list[dict[str, Any]]:
    """At each bar: claims, right ones, precision, recall, false claims on non-duplicates."""
    repeats = [x for x in looked if x.save.repeats is not None]
    others = [x for x in looked if x.save.repeats is None]
    rows = []
    for at in bars:
        claimed = [x for x in looked if x.cosine is not None and x.cosine >= at]
        right = sum(x.right for x in claimed)
        false_on_others = sum(x.save.repeats is None for x in claimed)
        rows.append(
            {
                "bar": at,
                "claims": len(claimed),
                "right": right,
                "precision": round(right / len(claimed), 3) if claimed else None,
                "recall": round(right / len(repeats), 3) if repeats else None,
                "false_claims": round(false_on_others / len(others), 3) if others else None,
            }
        )
    return rows


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """Count, min, 10th, 50th and 90th percentile, max."""
    ranked = sorted(values)
    if not ranked:
        return {"n": 0, "min": None, "p10": None, "p50": None, "p90": None, "max": None}

    def at(share: float) -> float:
        return round(ranked[min(len(ranked) - 1, int(share * len(ranked)))], 3)

    return {
        "n": len(ranked),
        "min": at(0.0),
        "p10": at(0.1),
        "p50": at(0.5),
        "p90": at(0.9),
        "max": round(ranked[-1], 3),
    }


def measure(source: Source, embedder: EmbeddingModel, home: Path) -> dict[str, Any]:
    """One model on one source: the cosines' spread and the figures at every bar."""
    figures: dict[str, Any] = {"source": source.name, "model": embedder.name}
    if source.korean and not reads_korean(embedder.name):
        pairs = pair_cosines(source, embedder)
        figures["read"] = False
        figures["pairs"] = {kind: spread(values) for kind, values in pairs.items()}
        return figures
    looked = look_up(home, source, embedder)
    figures["read"] = True
    figures["cosines"] = {
        "duplicate_with_its_own": spread(
            [x.cosine for x in looked if x.right and x.cosine is not None]
        ),
        "duplicate_nearest_another": spread(
            [x.cosine for x in looked if x.save.repeats and not x.right and x.cosine is not None]
        ),
        "non_duplicate_nearest": spread(
            [x.cosine for x in looked if x.save.repeats is None and x.cosine is not None]
        ),
    }
    figures["bars"] = at_bars(looked)
    figures["product_bar"] = duplicates.bar(embedder.name, korean=source.korean)
    return figures


def models(
    config: Config, embedder: EmbeddingModel, progress: Callable[[str], None]
) -> dict[str, EmbeddingModel]:
    """The configured model and the other installed ones, by name."""
    out: dict[str, EmbeddingModel] = {embedder.name: embedder}
    try:
        from mama_plugin.embeddings.e5 import MODEL_NAME, E5Embedder

        if MODEL_NAME not in out:
            out[MODEL_NAME] = E5Embedder(threads=1)
    except MamaError as exc:
        progress(f"multilingual-e5 left out: {exc}")
    try:
        from mama_plugin.embeddings import models_dir, mpnet

        if mpnet.MODEL_NAME not in out:
            out[mpnet.MODEL_NAME] = mpnet.open_mpnet(models_dir(config))
    except MamaError as exc:
        progress(f"all-mpnet-base-v2 left out: {exc}")
    return out


def duplicates_run(
    config: Config,
    embedder: EmbeddingModel | None,
    *,
    quick: bool = False,
    progress: Callable[[str], None] = print,
) -> tuple[str, dict[str, Any]]:
    """Every installed model (``quick``: the configured one) on both sources."""
    if embedder is None:
        raise MamaError("duplicates needs an embedding model (drop --keyword-only)")
    chosen = {embedder.name: embedder} if quick else models(config, embedder, progress)
    sources = (tech(), klue())
    runs = []
    for name, model in chosen.items():
        for source in sources:
            progress(f"{name} on {source.name}")
            with tempfile.TemporaryDirectory(prefix="mama-dup-") as home:
                runs.append(measure(source, model, Path(home)))
    figures = {"runs": runs, "load": round(os.getloadavg()[0], 1)}
    return report(figures), figures


def report(figures: dict[str, Any]) -> str:
    """The figures as text: per model and source, the cosines' spread, then each bar."""
    lines = ["Near-duplicates at save: the nearest memory of the same kind, by cosine", ""]
    for run in figures["runs"]:
        lines.append(f"{run['model']} — {run['source']}")
        if not run["read"]:
            lines.append("  not claimed: the model cannot read Korean; pair cosines:")
            for kind, s in run["pairs"].items():
                lines.append(f"    {kind:<28}{_spread(s)}")
            lines.append("")
            continue
        for kind, s in run["cosines"].items():
            lines.append(f"  {kind:<30}{_spread(s)}")
        lines.append("  bar    claims right precision recall false-claims")
        for row in run["bars"]:
            mark = " ← product" if row["bar"] == run["product_bar"] else ""
            lines.append(
                f"  {row['bar']:<6.3f} {row['claims']:>6} {row['right']:>5} "
                f"{fmt(row['precision']):>9} {fmt(row['recall']):>6} "
                f"{fmt(row['false_claims']):>12}{mark}"
            )
        lines.append("")
    lines.append(f"load average {figures['load']}")
    return "\n".join(lines) + "\n"


def _spread(s: dict[str, Any]) -> str:
    if not s["n"]:
        return "n 0"
    return (
        f"n {s['n']:>3}  min {fmt(s['min'])}  p10 {fmt(s['p10'])}  p50 {fmt(s['p50'])}  "
        f"p90 {fmt(s['p90'])}  max {fmt(s['max'])}"
    )
