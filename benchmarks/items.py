"""``python -m benchmarks items``: are two items of open work one, and does a later session
close one? The rules against a sentence embedding and each model profile asked.

The second question is :mod:`.items_closed`'s, on the truth benchmark's labelled steps; this
module asks the first, on the story benchmark's own starts, and reports both.

Issue 45 asks whether a model earns "are these two items the same?". The pairs come from the
starts :mod:`.story` judges (every labelled sequence, startup starts): two entries of one
start that each tell a labelled open item (:mod:`.story_judge`) make a pair; it is *one item*
when they tell a labelled item in common, *two* when the items they tell are disjoint. This
checkout's starts hold only the pairs its rules left apart, so the rules' recall is 0 on them
by construction: ``--baseline-plugin`` (a checkout from before the rules merged items, e.g.
e9cf2b2) adds its starts' pairs, the ones the rules did merge among them. Each pair is judged,
in the same run, by:

- ``rules``: :func:`mama_plugin.services.story.words.same_item` (two of a kind when both are
  steps or both problems, by the heading they were told under), the product's judge today;
- ``embedding``: the default embedding model's cosine, at the bar that does best on these
  very pairs (an optimistic ceiling: fitted and scored on one set) and at 0.6;
- each model profile asked (``--profiles``): one yes/no verdict, constrained to
  :class:`Verdict`, through the product's :class:`~mama_plugin.assist.runtime.Assistant`,
  alone and behind the rules (the rules' merges kept, the model asked about the rest: what the
  product would run).

Per judge: pairs, precision and recall of "one item" (of "done"), false merges (steps closed
while open), and for a model the median and p95 seconds a verdict took (the load aside). The
pairs are few and their labels were written by the helper that built the story benchmark: a
smoke-scale measure of whether a judge separates them at all, not a calibration.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic

from mama_plugin.assist.runtime import Assistant, Prompt
from mama_plugin.config import Config
from mama_plugin.services.story.words import same_item
from mama_plugin.text import strip_cue

from .coauthor import median, p95, profile_config, share, title, uptime
from .items_closed import closes_judges

PROBLEMS = ("unresolved", "decision open")  # the headings whose entries are problems
FIXED_BAR = 0.6
INSTRUCTIONS = (
    "Two items of open work from one coding project's notes. Answer same=true only when both "
    "name one piece of work or one problem (said in other words, or one a part of the other), "
    "and same=false when they are two things to do or check, even on one topic: a failure and "
    "the step that would fix it are two items."
)
EXAMPLES = [
    (
        "A: make fetch_user() retry on a 503\nB: add retries to the API client's user lookup",
        '{"same": true}',
    ),
    (
        "A: `make lint` failed: E501 line too long in api/client.py\n"
        "B: wrap the long lines in api/client.py",
        '{"same": false}',
    ),
    (
        "A: document the --dry-run flag\nB: add a --dry-run flag to the importer",
        '{"same": false}',
    ),
]


class Verdict(pydantic.BaseModel):
    """A model's answer: are the two items one?"""

    same: bool


@dataclass(frozen=True)
class Pair:
    """Two entries of one start, each with the kind of work it is, and whether they are one."""

    a: str
    b: str
    kind_a: str
    kind_b: str
    same: bool


def pairs_of(rows: list[Any]) -> list[Pair]:
    """The distinct pairs of the judged starts' entries that each tell a labelled open item."""
    seen: dict[tuple[str, str], Pair] = {}
    for _, _, judged, _ in rows:
        told = [(h, e, set(o)) for h, e, o, _ in judged.entries if o]
        for (ha, a, oa), (hb, b, ob) in itertools.combinations(told, 2):
            if a == b:
                continue
            (ka, a), (kb, b) = sorted([(_kind(ha), a), (_kind(hb), b)], key=lambda x: x[1])
            seen.setdefault((a, b), Pair(a, b, ka, kb, bool(oa & ob)))
    return list(seen.values())


def _kind(heading: str) -> str:
    return "problem" if heading in PROBLEMS else "step"


def scored(said: list[bool], pairs: list[Pair]) -> dict[str, Any]:
    """Precision and recall of "one item" for one judge's verdicts on ``pairs``."""
    hits = sum(s and p.same for s, p in zip(said, pairs, strict=True))
    merged = sum(said)
    return {
        "precision": share(hits, merged),
        "recall": share(hits, sum(p.same for p in pairs)),
        "false_merges": merged - hits,
        "merged": merged,
    }


def by_rules(pairs: list[Pair]) -> list[bool]:
    return [same_item(strip_cue(p.a), strip_cue(p.b), alike=p.kind_a == p.kind_b) for p in pairs]


def by_embedding(pairs: list[Pair], config: Config) -> tuple[list[float], str]:
    """Each pair's cosine under the configured embedding model, and the model's name."""
    from mama_plugin.embeddings.resolve import open_embedder

    embedder = open_embedder(config)
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))

    def cosine(x: list[float], y: list[float]) -> float:
        dot = sum(i * j for i, j in zip(x, y, strict=True))
        return dot / (math.sqrt(sum(i * i for i in x)) * math.sqrt(sum(j * j for j in y)))

    return [cosine(vectors[p.a], vectors[p.b]) for p in pairs], str(embedder.name)


def best_bar(cosines: list[float], pairs: list[Pair]) -> float:
    """The bar whose "one item" verdicts have the best F1 on ``pairs`` (ties: the higher)."""

    def f1(bar: float) -> float:
        s = scored([c >= bar for c in cosines], pairs)
        p, r = s["precision"] or 0.0, s["recall"] or 0.0
        return 2 * p * r / (p + r) if p + r else 0.0

    return max(sorted(set(cosines), reverse=True), key=f1, default=1.0)


def by_model(
    pairs: list[Pair], config: Config, say: Callable[[str], None] | None
) -> tuple[list[bool | None], list[float], float]:
    """Each pair's verdict by ``config``'s model (None: no valid answer), the seconds each took
    and the load's."""
    model = Assistant(config)
    load_s = model.warm()
    said: list[bool | None] = []
    took: list[float] = []
    for i, p in enumerate(pairs, 1):
        started = time.monotonic()
        answer = model.generate(
            Prompt(INSTRUCTIONS, EXAMPLES, f"A: {p.a}\nB: {p.b}"), Verdict, max_tokens=12
        )
        took.append(time.monotonic() - started)
        said.append(answer.value.same if answer.value is not None else None)
        if say and i % 20 == 0:
            say(f"{config.settings.assist_profile}: pair {i}/{len(pairs)}")
    model.close()
    return said, took, load_s


def same_items_run(
    config: Config,
    profiles: list[str],
    baseline: Path | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Judge every pair with the rules, the embedding and each profile; the report and figures."""
    from .story import ROOT, judged, load, load_story, plan, replay_with

    load_before = uptime()
    labels = load(scripted={name: actions for name, actions in load_story()[0]})
    rows = []
    for checkout in (ROOT, *([baseline] if baseline else [])):
        if progress:
            progress(f"replaying {len(labels.sequences)} sequences with {checkout}")
        told = replay_with(checkout, plan(labels, labels.sequences))
        rows += judged(labels, labels.sequences, told)["startup"]
    pairs = pairs_of(rows)
    rules = by_rules(pairs)
    judges: dict[str, dict[str, Any]] = {"rules": scored(rules, pairs)}
    cosines, embedder = by_embedding(pairs, config)
    bar = best_bar(cosines, pairs)
    for name, at in (
        (f"embedding ≥ {bar:.2f} (best on these pairs)", bar),
        (f"embedding ≥ {FIXED_BAR}", FIXED_BAR),
    ):
        judges[name] = scored([c >= at for c in cosines], pairs)
    for profile in profiles:
        if progress:
            progress(f"{profile}: {len(pairs)} pairs")
        said, took, load_s = by_model(pairs, profile_config(config, profile), progress)
        alone = [bool(s) for s in said]
        judges[profile] = scored(alone, pairs) | {
            "unanswered": sum(s is None for s in said),
            "seconds_median": median(took),
            "seconds_p95": p95(took),
            "load_s": round(load_s, 2),
            "title": title(profile),
        }
        judges[f"rules, then {profile}"] = scored(
            [r or m for r, m in zip(rules, alone, strict=True)], pairs
        )
    data = {
        "starts_of": [str(ROOT), *([str(baseline)] if baseline else [])],
        "pairs": len(pairs),
        "one_item": sum(p.same for p in pairs),
        "embedding_model": embedder,
        "judges": judges,
        "closes": closes_judges(config, profiles, progress),
        "load_before": load_before,
        "load_after": uptime(),
        "examples": [
            {"a": p.a, "b": p.b, "same": p.same, "rules": r, "cosine": round(c, 3)}
            for p, r, c in zip(pairs, rules, cosines, strict=True)
        ],
    }
    return report_of(data), data


def report_of(data: dict[str, Any]) -> str:
    """The report ``python -m benchmarks items`` prints for ``data`` (its JSON)."""
    closes = data["closes"]
    lines = [
        f"{data['pairs']} pairs of open-work entries from the story benchmark's startup starts "
        f"({' and '.join(data['starts_of'])}), {data['one_item']} of them one item (embedding: "
        f"{data['embedding_model']})",
        "",
        *judges_table(data["judges"], "false merges"),
        "",
        f"{closes['pairs']} (step, later turn) pairs of {closes['steps']} labelled steps (the "
        f"truth benchmark's), {closes['done']} of them done: does the later session close it?",
        "",
        *judges_table(closes["judges"], "closed while open"),
        "",
        f"load: {data['load_before']} → {data['load_after']}",
        "",
    ]
    return "\n".join(lines)


def judges_table(judges: dict[str, dict[str, Any]], wrong: str) -> list[str]:
    """One table row per judge: precision, recall, its wrong verdicts, seconds a verdict."""

    def cell(value: Any) -> str:
        return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = [
        f"| judge | precision | recall | {wrong} | s per verdict, median (p95) |",
        "|---|---|---|---|---|",
    ]
    for name, j in judges.items():
        speed = (
            f"{cell(j['seconds_median'])} ({cell(j['seconds_p95'])})"
            if "seconds_median" in j
            else "–"
        )
        lines.append(
            f"| {name} | {cell(j['precision'])} | {cell(j['recall'])} | {j['false_merges']} "
            f"| {speed} |"
        )
    return lines
