"""No loss on the project's own recall set: ``recall_prompts.json`` through ``search_by_context``.

The set (written for MAMA, so a smoke test, not a measure) holds one project's decisions with a
supersede chain and outcomes, and prompts each labelled with the topic it should find. For
every labelled prompt and every ranking option: is the topic's current decision the first
result (R@1), and among the first three (R@3)? Links and type pairs only act here: LoCoMo's
turns have no links.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.saving.memories import record_outcome, save_decision
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.search.options import DEFAULT, MAIN, TODAY, Options
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

from .checkout import DATA

LABELLED = DATA / "recall_prompts.json"
PROJECT = "/labelled"
OPTIONS: dict[str, Options] = {
    "today": TODAY,
    "main": MAIN,
    "full": DEFAULT,
    "+links": replace(DEFAULT, links=True),
    "+typepair": replace(DEFAULT, type_pairs=True),
    "+lastuse": replace(DEFAULT, last_use=True),
}


def run(embedder: EmbeddingModel | None) -> dict[str, dict[str, float]]:
    """R@1 and R@3 of the labelled topic's current decision, per option."""
    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="mama-ownset-") as tmp:
        home = Path(tmp)
        with Store.open(home / "own.db", config=Config(home)) as store:
            save_labelled(store, PROJECT, data["memories"])
            if embedder is not None:
                drain(store, embedder)
            labelled = [(prompt, topic) for prompt, topic in data["prompts"] if topic]
            out: dict[str, dict[str, float]] = {}
            for name, options in OPTIONS.items():
                first = top3 = 0
                for prompt, topic in labelled:
                    result = search_by_context(
                        store, prompt, embedder=embedder, project=PROJECT, k=3,
                        record_usage=False, options=options,
                    )  # fmt: skip
                    hits = [r for r in result.primary_results if r.status == "current"]
                    topics = [r.topic for r in hits]
                    first += bool(topics) and topics[0] == topic
                    top3 += topic in topics[:3]
                out[name] = {"r1": round(first / len(labelled), 4),
                             "r3": round(top3 / len(labelled), 4), "n": len(labelled)}  # fmt: skip
    return out


def save_labelled(store: Store, project: str, memories: list[dict[str, Any]]) -> list[str]:
    """Save the set's decisions (supersedes and outcomes included); their ids, in order."""
    ids: list[str] = []
    for m in memories:
        item = {"topic": m["topic"], "decision": m["decision"], "reasoning": m["reasoning"]}
        if "supersedes" in m:
            item["supersedes"] = ids[m["supersedes"]]
        ids.append(save_decision(store, project, item).memory.id)
        if "outcome" in m:
            status, details = m["outcome"]
            record_outcome(store, {"memory_id": ids[-1], "outcome": status, "details": details})
    return ids


def table(rates: dict[str, Any]) -> str:
    """One line per option."""
    lines = [f"{'system':<12}{'R@1':>8}{'R@3':>8}"]
    lines += [f"{n:<12}{r['r1']:>8.3f}{r['r3']:>8.3f}" for n, r in rates.items()]
    return "\n".join(lines) + "\n"
