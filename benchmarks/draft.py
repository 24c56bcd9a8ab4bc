"""``python -m benchmarks draft``: what the local model adds to a draft, scored on labelled turns.

Each labelled turn (``benchmarks/data/draft_labels.json``: a turn of a recorded Claude Code
transcript, the decision a /mama-save after it would draft, and what the conversation states
for reasoning, alternatives, tension, next steps and evidence) is drafted from the transcript
as it stood at the end of that turn, in the same run, by the deterministic extractor alone and
by the extractor with each model profile asked for (every layer used, whatever the profile is
trusted with, so that the figures can decide it). Per configuration: the items proposed, the
share grounded (:func:`~mama_plugin.assist.draft.grounded`), correct (:mod:`.coauthor`'s
match), grounded and correct, the recall of the labelled items, the share of the model's items
that grounding dropped, and the latency: model load (cold, once per run), first token and full
draft (extraction, generation, grounding); the extractor's time alone as the baseline. Per
layer, the recall and the correct share of the items the model added, and whether the model
earned the layer: it raised the layer's recall and the items it added are correct at least as
often as the extractor's. ``uptime`` is printed before and after, beside the latencies.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.assist.draft import Draft, ask, compose, grounded, read
from mama_plugin.assist.models import LAYERS
from mama_plugin.assist.runtime import Assistant
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.schema import parse
from mama_plugin.schema.assist import DraftRequest
from mama_plugin.text import estimate_tokens
from mama_plugin.transcript import Digest
from mama_plugin.transcript.turns import turn_digests

from .checkout import DATA, FIXTURES
from .coauthor import (
    cell,
    load_labels,
    matches,
    median,
    p95,
    profile_config,
    share,
    title,
    uptime,
)

LABELS = DATA / "draft_labels.json"
ORDER = ("reasoning", "alternatives", "tension", "next_steps", "evidence")
# What each whole recorded session decided (the ``memory`` and ``contention`` benchmarks draft
# these, as /mama-save does at a session's end).
DECISIONS = {
    "jwt_to_sessions": "Replace JWT refresh with server-side sessions",
    "postgres_job_queue": "Use PostgreSQL for the job queue",
    "cache_invalidation": "Make the catalog cache write-through",
}


def items_of(draft: Draft) -> dict[str, list[str]]:
    """The draft's proposed items, layer by layer (what a reviewer reads)."""
    p = draft.proposal
    reasoning = p["reasoning"]
    tension = p["tension"]
    return {
        "reasoning": [reasoning["primary"], *reasoning.get("secondary", [])],
        "alternatives": [
            f"{a['option']}: {a.get('rejected_because', '')}"
            for a in reasoning.get("alternatives_considered", [])
        ],
        "tension": [str(i) for key in ("concerns", "trade_offs", "risks") for i in tension[key]],
        "next_steps": [s["step"] for s in p["next_steps"]],
        "evidence": [e["source"] for e in p["evidence"]],
    }


class Tally:
    """One configuration's counts over the labelled turns."""

    def __init__(self) -> None:
        self.proposed = {layer: 0 for layer in ORDER}
        self.grounded = {layer: 0 for layer in ORDER}
        self.correct = {layer: 0 for layer in ORDER}
        self.both = {layer: 0 for layer in ORDER}
        self.found = {layer: 0 for layer in ORDER}
        self.labelled = {layer: 0 for layer in ORDER}
        self.added = {layer: 0 for layer in ORDER}  # items the model added to the extractor's
        self.added_correct = {layer: 0 for layer in ORDER}
        self.model_items = self.model_dropped = 0
        self.outcomes: dict[str, int] = {}
        self.load: list[float] = []
        self.first: list[float] = []
        self.full: list[float] = []
        self.text_tokens: list[float] = []  # the draft as the reviewing model reads it (tokens)

    def score(
        self, label: dict[str, Any], draft: Draft, conversation: str, baseline: Draft | None
    ) -> None:
        """Count one turn's draft against its labels (``baseline``: the extractor's draft)."""
        mine = items_of(draft)
        before = items_of(baseline) if baseline is not None else None
        self.text_tokens.append(estimate_tokens(draft.as_text(Path("/nonexistent"))))
        for layer in ORDER:
            evidence = layer == "evidence"
            labels = list(label[layer])
            self.labelled[layer] += len(labels)
            for item in mine[layer]:
                right = any(matches(item, lab, evidence=evidence) for lab in labels)
                # Evidence comes from the transcript's tool calls, so it is grounded by making.
                rooted = evidence or grounded(item, conversation)
                self.proposed[layer] += 1
                self.grounded[layer] += rooted
                self.correct[layer] += right
                self.both[layer] += right and rooted
                if before is not None and item not in before[layer]:
                    self.added[layer] += 1
                    self.added_correct[layer] += right
            self.found[layer] += sum(
                any(matches(item, lab, evidence=evidence) for item in mine[layer]) for lab in labels
            )

    def total(self, counts: dict[str, int]) -> int:
        """The count over every layer."""
        return sum(counts.values())

    def figures(self) -> dict[str, Any]:
        """The configuration's figures (shares over every layer, then per layer)."""
        n = self.total(self.proposed)
        return {
            "proposed": n,
            "grounded_share": share(self.total(self.grounded), n),
            "correct_share": share(self.total(self.correct), n),
            "grounded_and_correct_share": share(self.total(self.both), n),
            "recall": share(self.total(self.found), self.total(self.labelled)),
            "model_items": self.model_items,
            "dropped_share": share(self.model_dropped, self.model_items),
            "outcomes": self.outcomes,
            "load_s": median(self.load),
            "first_token_s_median": median(self.first),
            "full_s_median": median(self.full),
            "full_s_p95": p95(self.full),
            # The draft's text (templates/draft.md.j2, no user override), 4 characters a token.
            "text_tokens_median": median(self.text_tokens),
            "text_tokens_p90": sorted(self.text_tokens)[int(len(self.text_tokens) * 0.9)]
            if self.text_tokens
            else None,
            "text_tokens_max": max(self.text_tokens, default=None),
            "layers": {
                layer: {
                    "proposed": self.proposed[layer],
                    "correct_share": share(self.correct[layer], self.proposed[layer]),
                    "recall": share(self.found[layer], self.labelled[layer]),
                    "added": self.added[layer],
                    "added_correct_share": share(self.added_correct[layer], self.added[layer]),
                }
                for layer in ORDER
            },
        }


def cases(
    labels: Path, limit: int | None
) -> list[tuple[str, Digest, DraftRequest, dict[str, Any]]]:
    """The labelled turns: (name, the transcript as it stood after the turn, request, label)."""
    data = load_labels(labels, "draft")
    turns = data.get("turns") or []
    if not turns:
        raise MamaError(f"no labelled turns in {labels}")
    digests: dict[str, list[Digest]] = {}
    out = []
    for label in turns[:limit]:
        name = label["transcript"]
        path = FIXTURES / f"{name}.jsonl"
        if name not in digests:
            digests[name] = turn_digests(path)
        if not 1 <= label["turn"] <= len(digests[name]):
            raise MamaError(f"{labels}: {name} has no turn {label['turn']} (is {path} there?)")
        request = parse(DraftRequest, {"decision": label["decision"], "draft": True})
        out.append((f"{name}#{label['turn']}", digests[name][label["turn"] - 1], request, label))
    return out


def draft_run(
    runs: int,
    *,
    config: Config,
    profiles: list[str] | None = None,
    threads: int | None = None,
    labels: Path = LABELS,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures.

    ``profiles``: the model profiles to compare (default: the configured one); ``threads``
    overrides ``assist_threads`` (0: all cores); ``limit``: the first N labelled turns only;
    ``progress`` is told each turn drafted by a model.
    """
    say = progress or (lambda _line: None)
    chosen = profiles or [config.settings.assist_profile]
    turns = cases(labels, limit)
    before = uptime()
    extractor = Tally()
    tallies = {name: Tally() for name in chosen}
    titles = {name: title(name) for name in chosen}
    for run in range(runs):
        baselines: dict[str, Draft] = {}
        for name, digest, request, label in turns:
            started = time.perf_counter()
            reading = read(request, digest)
            draft = compose(request, reading, None, "extractor only")
            extractor.full.append(time.perf_counter() - started)
            baselines[name] = draft
            if run == 0:
                extractor.score(label, draft, reading.conversation, None)
        for profile in chosen:
            tally = tallies[profile]
            assistant = Assistant(profile_config(config, profile), threads=threads)
            try:
                tally.load.append(assistant.warm())
            except MamaError as exc:
                raise MamaError(f"bench draft: profile {profile}: {exc}") from exc
            for done, (name, digest, request, label) in enumerate(turns, 1):
                say(f"{profile}: turn {done}/{len(turns)} ({name})")
                started = time.perf_counter()
                reading = read(request, digest)
                generation = ask(assistant, reading.prompt) if reading.prompt else None
                draft = compose(request, reading, generation, "", layers=LAYERS)
                tally.full.append(time.perf_counter() - started)
                if generation is None:
                    continue
                tally.outcomes[generation.outcome] = tally.outcomes.get(generation.outcome, 0) + 1
                if generation.first_token_s is not None:
                    tally.first.append(generation.first_token_s)
                if run == 0:
                    tally.score(label, draft, reading.conversation, baselines[name])
                    if generation.value is not None:
                        v = generation.value
                        made = 1 + len(v.secondary) + len(v.alternatives) + len(v.concerns)
                        tally.model_items += made + len(v.next_steps)
                        tally.model_dropped += len(draft.dropped)
            assistant.close()
    after = uptime()
    data: dict[str, Any] = {
        "labels": str(labels),
        "turns": len(turns),
        "runs": runs,
        "threads": threads if threads is not None else config.settings.assist_threads,
        "uptime": [before, after],
        "configurations": {"extractor": extractor.figures()}
        | {f"extractor + {p}": tallies[p].figures() for p in chosen},
        "profiles": titles,
    }
    data["earned_layers"] = {p: earned(extractor, tallies[p]) for p in chosen}
    return render(data), data


def _load_average() -> float | None:
    """The one-minute load average (None where the system does not tell it)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def earned(extractor: Tally, model: Tally) -> list[str]:
    """The layers where the model raised recall with added items correct at least as often
    as the extractor's items of that layer."""
    base, mine = extractor.figures()["layers"], model.figures()["layers"]
    won = []
    for layer in sorted(LAYERS):
        gained = (mine[layer]["recall"] or 0) > (base[layer]["recall"] or 0)
        added = mine[layer]["added_correct_share"]
        if gained and added is not None and added >= (base[layer]["correct_share"] or 0):
            won.append(layer)
    return won


def _tokens(f: dict[str, Any]) -> str:
    """The draft text's tokens as the reviewing model reads it ("–" in figures from before
    12-02, which have none)."""
    if not f.get("text_tokens_median"):
        return "–"
    return f"{f['text_tokens_median']:g} / {f['text_tokens_p90']:g} / {f['text_tokens_max']:g}"


def render(data: dict[str, Any]) -> str:
    """The report: one row per configuration, then per layer."""
    lines = [
        f"Drafting on {data['turns']} labelled turns ({data['labels']}), "
        f"{data['runs']} run(s), model threads {data['threads']}",
        f"  uptime before: {data['uptime'][0]}",
        f"  uptime after:  {data['uptime'][1]}",
        "",
        "| configuration | proposed | grounded | correct | grounded+correct | recall | dropped "
        "| load | first token | full (median / p95) | draft tokens (median / p90 / max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in data["configurations"].items():
        model = name != "extractor"
        full = (
            f"{cell(f['full_s_median'], unit=' s')} / {cell(f['full_s_p95'], unit=' s')}"
            if model
            else f"{cell(f['full_s_median'], unit=' ms', scale=1000)} / "
            f"{cell(f['full_s_p95'], unit=' ms', scale=1000)}"
        )
        lines.append(
            f"| {name} | {f['proposed']} | {cell(f['grounded_share'])} | "
            f"{cell(f['correct_share'])} | {cell(f['grounded_and_correct_share'])} | "
            f"{cell(f['recall'])} | {cell(f['dropped_share']) if model else '–'} | "
            f"{cell(f['load_s'], unit=' s')} | {cell(f['first_token_s_median'], unit=' s')} | "
            f"{full} | {_tokens(f)} |"
        )
    lines += ["", "| layer | " + " | ".join(data["configurations"]) + " |"]
    lines.append("|---|" + "---|" * len(data["configurations"]))
    for layer in ORDER:
        row = []
        for name, f in data["configurations"].items():
            x = f["layers"][layer]
            text = f"recall {cell(x['recall'])}, correct {cell(x['correct_share'])}"
            if name != "extractor":
                text += f", +{x['added']} added ({cell(x['added_correct_share'])} correct)"
            row.append(text)
        lines.append(f"| {layer} | " + " | ".join(row) + " |")
    lines.append("")
    for profile, layers in data["earned_layers"].items():
        won = ", ".join(layers) if layers else "none: the extractor's answer is used"
        lines.append(f"  {data['profiles'][profile]}: earned layers: {won}")
    return "\n".join(lines) + "\n"
