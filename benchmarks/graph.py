"""The ``graph`` benchmark: relationship words by meaning, and the graph passes at size.

Two parts:

- **Synonyms, English and Korean.** A labelled set of relationship words in groups of one
  meaning (written here: a smoke test of what each model does with single words, not a tuned
  bar) through :func:`~mama_plugin.services.graph.synonyms.find_synonyms`, for every installed
  model: at each threshold the synonym pairs found, the other pairs claimed, and the
  opposite pairs (``challenges`` / ``supports``) claimed.
- **At size.** A synthetic project of ``--memories`` memories (10,000) linked by
  ``--words`` relationship words (100) with Zipf-like use, through the product's own writes;
  then the time of ``mama graph tidy`` (first pass, embedding every word; second pass, from
  the vector cache), of the health figures, of one ``find_synonyms`` and of a relationship
  query, with the health figures themselves.
"""

from __future__ import annotations

import itertools
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.server.word_params import peek_words
from mama_plugin.services.graph.health import graph_health
from mama_plugin.services.graph.queries import links_by_relationship
from mama_plugin.services.graph.synonyms import WordVectors, find_synonyms
from mama_plugin.services.graph.tidy import tidy
from mama_plugin.services.graph.traverse import MAX_DEPTH, traverse
from mama_plugin.storage import NewMemory, Store

from .duplicates import models

PROJECT = "/bench/graph"
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85)
# Groups of one meaning, English and Korean.
GROUPS: tuple[tuple[str, ...], ...] = (
    ("inspired_by", "motivated_by", "based_on", "builds_on", "derived_from", "영감을_받은"),
    ("supersedes", "replaces", "대체함"),
    ("implements", "carries_out", "구현함"),
    ("depends_on", "requires", "의존함"),
    ("challenges", "contradicts", "conflicts_with", "반박함"),
    ("supports", "agrees_with", "지지함"),
    ("fixes", "addresses_failure_of", "고침"),
    ("refines", "improves", "개선함"),
    ("precedes", "이전에"),
    ("follows", "이어서"),
)
OPPOSITES = (
    ("challenges", "supports"),
    ("challenges", "agrees_with"),
    ("contradicts", "supports"),
    ("반박함", "지지함"),
    ("precedes", "follows"),
)


def labelled(embedder: EmbeddingModel, store: Store) -> dict[str, Any]:
    """At each threshold: synonym pairs found, other pairs claimed, opposites claimed."""
    words = [w for g in GROUPS for w in g]
    group = {w: i for i, g in enumerate(GROUPS) for w in g}
    vectors = WordVectors(store, embedder)
    vectors.of(words)
    pairs = []
    for a, b in itertools.combinations(words, 2):
        score = vectors.similarity(a, b)
        pairs.append((score, group[a] == group[b], (a, b) in OPPOSITES or (b, a) in OPPOSITES))
    synonyms = sum(s for _, s, _ in pairs)
    rows = []
    for t in THRESHOLDS:
        claimed = [p for p in pairs if p[0] >= t]
        rows.append(
            {
                "threshold": t,
                "synonyms_found": sum(p[1] for p in claimed),
                "others_claimed": sum(not p[1] for p in claimed),
                "opposites_claimed": sum(p[2] for p in claimed),
            }
        )
    mean = statistics.fmean
    return {
        "model": embedder.name,
        "words": len(words),
        "chance": round(vectors.chance(), 3),
        "synonym_pairs": synonyms,
        "other_pairs": len(pairs) - synonyms,
        "synonym_mean": round(mean(p[0] for p in pairs if p[1]), 3),
        "other_mean": round(mean(p[0] for p in pairs if not p[1]), 3),
        "opposite_mean": round(mean(p[0] for p in pairs if p[2]), 3),
        "rows": rows,
    }


def synthetic_words(n: int) -> list[str]:
    """``n`` distinct relationship words: the labelled ones, then variants of them."""
    base = [w for g in GROUPS for w in g]
    out = list(base)
    for suffix in itertools.count(1):
        for w in base:
            if len(out) >= n:
                return out[:n]
            out.append(f"{w}_{['partly', 'mostly', 'again', 'indirectly'][suffix % 4]}{suffix}")
    return out


def build(store: Store, memories: int, words: list[str], seed: int = 7) -> int:
    """Save ``memories`` memories and about 1.2 links per memory; return the links made."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf: a few words do most work
    now = int(time.time() * 1000)
    ids: list[str] = []
    with store.transaction():
        for i in range(memories):
            new = NewMemory(
                id=f"g{i:05d}",
                type="decision" if i % 3 else "insight",
                project=PROJECT,
                content=f"synthetic memory {i}",
                reasoning={"primary": f"because of measurement {i}"} if i % 3 else None,
                created_at=now - (memories - i) * 60_000,
            )
            ids.append(store.memories.insert(new)[0].id)
    made = 0
    with store.transaction():
        for i in range(1, memories):
            for _ in range(rng.choice((0, 1, 1, 1, 2, 2))):  # some memories stay isolated
                # Mostly to a recent memory (a thread of work), sometimes to any earlier one.
                j = max(0, i - rng.randint(1, 20)) if rng.random() < 0.8 else rng.randrange(i)
                word = rng.choices(words, weights)[0]
                if word == "supersedes":
                    word = "replaces"  # supersession marks targets: not what this measures
                store.links.add(ids[i], ids[j], word, f"synthetic link {i}->{j}")
                made += 1
    return made


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()``'s result and its time in milliseconds."""
    began = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - began) * 1000


def graph_run(
    config: Config,
    embedder: EmbeddingModel | None,
    *,
    memories: int = 10_000,
    words: int = 100,
    quick: bool = False,
    progress: Callable[[str], None] = print,
) -> tuple[str, dict[str, Any]]:
    """Both parts; ``quick``: the configured model only for the labelled words."""
    if embedder is None:
        raise MamaError("graph needs an embedding model (drop --keyword-only)")
    chosen = {embedder.name: embedder} if quick else models(config, embedder, progress)
    figures: dict[str, Any] = {"labelled": []}
    with tempfile.TemporaryDirectory(prefix="mama-graph-") as home:
        cfg = Config(Path(home))
        with Store.open(Path(home) / "graph.db", config=cfg) as store:
            for name, model in chosen.items():
                progress(f"labelled words with {name}")
                figures["labelled"].append(labelled(model, store))
            vocabulary = synthetic_words(words)
            progress(f"building {memories} memories with {len(vocabulary)} words")
            links, build_ms = timed(lambda: build(store, memories, vocabulary))
            first, tidy_ms = timed(lambda: tidy(store, embedder))
            _, tidy_again_ms = timed(lambda: tidy(store, embedder))
            health, health_ms = timed(lambda: graph_health(store, PROJECT))
            _, synonyms_ms = timed(lambda: find_synonyms(store, embedder, "inspired_by"))
            query, query_ms = timed(
                lambda: links_by_relationship(store, embedder, "inspired_by", project=PROJECT)
            )
            # What the front reads at each tools/list: the words that are link tool parameters.
            params, params_ms = timed(lambda: peek_words(store.path, PROJECT))
            starts = [m.id for m in store.memories.recent(project=PROJECT, limit=200)]
            _, walk_cold_ms = timed(
                lambda: [traverse(store, i, max_depth=MAX_DEPTH) for i in starts]
            )
            _, walk_warm_ms = timed(
                lambda: [traverse(store, i, max_depth=MAX_DEPTH) for i in starts]
            )
    figures["size"] = {
        "memories": memories,
        "words": len(vocabulary),
        "links": links,
        "build_s": round(build_ms / 1000, 1),
        "tidy_first_ms": round(tidy_ms),
        "tidy_cached_ms": round(tidy_again_ms),
        "clusters": len(first.clusters),
        "health_ms": round(health_ms),
        "find_synonyms_ms": round(synonyms_ms, 1),
        "relationship_query_ms": round(query_ms, 1),
        "query_words": len(query.words),
        "query_links": len(query.links),
        "parameter_words": [w.word for w in params],
        "parameter_words_ms": round(params_ms, 1),
        "walks": len(starts),
        "walks_cold_ms": round(walk_cold_ms, 1),
        "walks_cached_ms": round(walk_warm_ms, 1),
        "model": embedder.name,
        "health": {k: v for k, v in health.as_dict().items() if k != "orphaned"},
    }
    return report(figures), figures


def report(figures: dict[str, Any]) -> str:
    """The figures as text."""
    lines = [
        "Relationship words by meaning (labelled English/Korean set, on each model's scale)",
        "",
    ]
    for run in figures["labelled"]:
        lines.append(
            f"{run['model']}: {run['words']} words, {run['synonym_pairs']} synonym pairs, "
            f"{run['other_pairs']} others; chance cosine {run['chance']}; mean score "
            f"synonyms {run['synonym_mean']}, "
            f"others {run['other_mean']}, opposites {run['opposite_mean']}"
        )
        lines.append("  threshold  synonyms-found  others-claimed  opposites-claimed")
        for r in run["rows"]:
            lines.append(
                f"  {r['threshold']:<9.2f}  {r['synonyms_found']:>14}  {r['others_claimed']:>14}"
                f"  {r['opposites_claimed']:>17}"
            )
        lines.append("")
    s = figures["size"]
    h = s["health"]
    lines += [
        f"Synthetic graph: {s['memories']} memories, {s['words']} words, {s['links']} links "
        f"(built in {s['build_s']} s), model {s['model']}",
        f"  tidy: {s['tidy_first_ms']} ms first pass (embeds the words), "
        f"{s['tidy_cached_ms']} ms from the cache; {s['clusters']} clusters",
        f"  health: {s['health_ms']} ms — isolated {h['isolated']}, health {h['health']:.3f}, "
        f"components {h['components']}, largest {h['largest_share']:.3f}, diversity "
        f"{h['diversity']:.4f}, canonical coverage {h['canonical_coverage']:.3f}, "
        f"{len(h['recommendations'])} recommendations",
        f"  find_synonyms: {s['find_synonyms_ms']} ms; relationship query: "
        f"{s['relationship_query_ms']} ms ({s['query_words']} words, {s['query_links']} links)",
        f"  link tool word parameters (read as tools/list does): {s['parameter_words_ms']} ms, "
        f"{len(s['parameter_words'])} words ({', '.join(s['parameter_words'])})",
        f"  {s['walks']} walks of depth {MAX_DEPTH}: {s['walks_cold_ms']} ms cold, "
        f"{s['walks_cached_ms']} ms from the walk cache",
    ]
    return "\n".join(lines) + "\n"
