"""``python -m benchmarks links``: link judgements by the rules alone and with a model, scored.

Each labelled pair (``benchmarks/data/link_pairs.json``: two memories of one project, the
newer first, labelled link or no link and, for a link, the relationships that are right) is
judged as :func:`mama_plugin.assist.suggest.judge` judges a candidate: the pair's sources are
what :func:`~mama_plugin.assist.suggest.candidates` would find (search, always; the same topic
within 15 minutes or a week; a cosine of at least 0.85 between the two memories' embeddings,
when an embedding model is there), then the rules alone, and the rules with each model profile
asked for (in the same run). Per configuration: links proposed, the share whose reason is
grounded (a rule's reason quotes the memories by construction), correct (the pair is a link)
and with a right relationship, the recall of the labelled links, the share of the model's link
verdicts dropped for an ungrounded reason, and the latency of one judgement (model load once,
first token, full). The model's own verdicts, before the rules, are scored apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.assist.draft import grounded
from mama_plugin.assist.runtime import Assistant, Generation, M, Prompt
from mama_plugin.assist.suggest import QUARTER_HOUR_MS, SIMILAR, WEEK_MS, judge, pair_text
from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.storage import MemoryRecord
from mama_plugin.storage.text import embedding_text

from .checkout import DATA
from .coauthor import cell, load_labels, median, p95, profile_config, share, title, uptime

LABELS = DATA / "link_pairs.json"
DAY_MS = 86_400_000


class Recording:
    """A model that keeps each call's :class:`Generation` (to score the model's own verdict)."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self.last: Generation[Any] | None = None

    @property
    def name(self) -> str:
        """The model's name."""
        return self.assistant.name

    def generate(
        self, prompt: Prompt, schema: type[M], *, max_tokens: int, timeout_s: float | None = None
    ) -> Generation[M]:
        """The assistant's generation, kept."""
        result = self.assistant.generate(prompt, schema, max_tokens=max_tokens, timeout_s=timeout_s)
        self.last = result
        return result


def record(key: str, m: dict[str, Any], seq: int) -> MemoryRecord:
    """A labelled memory as the store would hand it to the judge."""
    at = int(m["day"]) * DAY_MS + seq * 60_000
    return MemoryRecord(
        seq=seq,
        id=key,
        type=m["type"],
        project=m["project"],
        topic=m["topic"],
        content=m["content"],
        specifics=[],
        evidence=[],
        reasoning={"primary": m["reason"]} if m["reason"] else {},
        tension={},
        continuity={},
        outcome_status=m["outcome"],
        outcome={"details": m["outcome_details"]} if m["outcome_details"] else {},
        confidence=0.8,
        tags=[],
        status="active",
        session_id="",
        metadata={},
        times_used=0,
        last_used=None,
        created_at=at,
        updated_at=at,
        version=1,
    )


def pairs_of(
    labels: Path, embedder: EmbeddingModel | None, limit: int | None
) -> list[tuple[MemoryRecord, MemoryRecord, list[str], dict[str, Any]]]:
    """(newer, older, sources, label) for every labelled pair."""
    data = load_labels(labels, "link")
    memories = {k: record(k, m, i + 1) for i, (k, m) in enumerate(data["memories"].items())}
    vectors: dict[str, list[float]] = {}
    if embedder is not None:
        texts = [embedding_text(m.topic, m.content, m.reasoning) for m in memories.values()]
        vectors = dict(zip(memories, embedder.embed(texts), strict=True))
    out = []
    for label in data["pairs"][:limit]:
        newer, older = memories[label["newer"]], memories[label["older"]]
        sources = ["search"]
        if newer.topic == older.topic:
            gap = abs(newer.created_at - older.created_at)
            if gap <= QUARTER_HOUR_MS:
                sources.append("same_topic_15min")
            elif gap <= WEEK_MS:
                sources.append("same_topic_week")
        if vectors:
            a, b = vectors[newer.id], vectors[older.id]
            if sum(x * y for x, y in zip(a, b, strict=True)) >= SIMILAR:
                sources.append("similar")
        out.append((newer, older, sources, label))
    return out


class Tally:
    """One configuration's counts over the labelled pairs."""

    def __init__(self) -> None:
        self.proposed = self.grounded = self.correct = self.related_right = 0
        self.found = self.found_right = 0
        self.model_links = self.model_dropped = 0
        self.raw_links = self.raw_right = self.raw_said = 0  # the model's own verdicts
        self.outcomes: dict[str, int] = {}
        self.load: list[float] = []
        self.first: list[float] = []
        self.full: list[float] = []

    def figures(self, links: int) -> dict[str, Any]:
        """The configuration's figures (``links``: labelled links)."""
        return {
            "proposed": self.proposed,
            "grounded_share": share(self.grounded, self.proposed),
            "correct_share": share(self.correct, self.proposed),
            "relationship_right_share": share(self.related_right, self.proposed),
            "recall": share(self.found, links),
            "recall_right_relationship": share(self.found_right, links),
            "model_link_verdicts": self.model_links,
            "dropped_share": share(self.model_dropped, self.model_links),
            "model_alone": {
                "said_link": self.raw_said,
                "precision": share(self.raw_links, self.raw_said),
                "recall": share(self.raw_links, links),
                "relationship_right": self.raw_right,
            },
            "outcomes": self.outcomes,
            "load_s": median(self.load),
            "first_token_s_median": median(self.first),
            "full_s_median": median(self.full),
            "full_s_p95": p95(self.full),
        }


def links_run(
    *,
    config: Config,
    profiles: list[str] | None = None,
    threads: int | None = None,
    embedder: EmbeddingModel | None = None,
    labels: Path = LABELS,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures (options as ``draft_run``'s)."""
    say = progress or (lambda _line: None)
    chosen = profiles or [config.settings.assist_profile]
    pairs = pairs_of(labels, embedder, limit)
    links = sum(bool(label["link"]) for *_, label in pairs)
    before = uptime()
    tallies: dict[str, Tally] = {"rules": Tally()}
    for newer, older, sources, label in pairs:
        started = time.perf_counter()
        verdict = judge(newer, older, sources, assistant=None)
        tallies["rules"].full.append(time.perf_counter() - started)
        _score(tallies["rules"], verdict, label, newer, older)
    for profile in chosen:
        tally = tallies[f"rules + {profile}"] = Tally()
        model = Recording(Assistant(profile_config(config, profile), threads=threads))
        try:
            tally.load.append(model.assistant.warm())
        except MamaError as exc:
            raise MamaError(f"bench links: profile {profile}: {exc}") from exc
        for done, (newer, older, sources, label) in enumerate(pairs, 1):
            say(f"{profile}: pair {done}/{len(pairs)} ({newer.id} -> {older.id})")
            model.last = None
            started = time.perf_counter()
            verdict = judge(newer, older, sources, assistant=model)
            tally.full.append(time.perf_counter() - started)
            gen = model.last
            if gen is not None:
                tally.outcomes[gen.outcome] = tally.outcomes.get(gen.outcome, 0) + 1
                if gen.first_token_s is not None:
                    tally.first.append(gen.first_token_s)
                said = gen.value
                if said is not None and said.relationship != "none":
                    tally.raw_said += 1
                    tally.raw_links += bool(label["link"])
                    tally.raw_right += said.relationship in label["relationships"]
                    tally.model_links += 1
                    tally.model_dropped += verdict is None or verdict.judged_by != "llm"
            _score(tally, verdict, label, newer, older)
        model.assistant.close()
    after = uptime()
    data: dict[str, Any] = {
        "labels": str(labels),
        "pairs": len(pairs),
        "links": links,
        "similar_rule": embedder is not None,
        "threads": threads if threads is not None else config.settings.assist_threads,
        "uptime": [before, after],
        "profiles": {p: title(p) for p in chosen},
        "configurations": {name: t.figures(links) for name, t in tallies.items()},
    }
    rules = data["configurations"]["rules"]
    data["earned"] = {p: earned(rules, data["configurations"][f"rules + {p}"]) for p in chosen}
    return render(data), data


def earned(rules: dict[str, Any], model: dict[str, Any]) -> bool:
    """True when the model raised the recall of right relationships without lowering the
    share of proposed links that are correct."""
    gained = (model["recall_right_relationship"] or 0) > (rules["recall_right_relationship"] or 0)
    return gained and (model["correct_share"] or 0) >= (rules["correct_share"] or 0)


def _score(tally: Tally, verdict: Any, label: dict[str, Any], newer: Any, older: Any) -> None:
    if verdict is None or verdict.relationship == "none":
        return
    tally.proposed += 1
    if verdict.judged_by == "llm":
        tally.grounded += grounded(verdict.reason, pair_text(newer, older))
    else:
        tally.grounded += 1  # a rule's reason is made of the memories' own words and dates
    if label["link"]:
        right = verdict.relationship in label["relationships"]
        tally.correct += 1
        tally.related_right += right
        tally.found += 1
        tally.found_right += right


def render(data: dict[str, Any]) -> str:
    """The report: one row per configuration, then the model's own verdicts."""
    lines = [
        f"Link judgements on {data['pairs']} labelled pairs ({data['links']} links; "
        f"{data['labels']}), model threads {data['threads']}, cosine rule "
        f"{'on' if data['similar_rule'] else 'off (no embedding model)'}",
        f"  uptime before: {data['uptime'][0]}",
        f"  uptime after:  {data['uptime'][1]}",
        "",
        "| configuration | proposed | grounded | correct | right relationship | recall "
        "| recall (right rel.) | dropped | load | first token | full (median / p95) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in data["configurations"].items():
        model = name != "rules"
        scale, unit = (1.0, " s") if model else (1000.0, " ms")
        lines.append(
            f"| {name} | {f['proposed']} | {cell(f['grounded_share'])} | "
            f"{cell(f['correct_share'])} | {cell(f['relationship_right_share'])} | "
            f"{cell(f['recall'])} | {cell(f['recall_right_relationship'])} | "
            f"{cell(f['dropped_share']) if model else '–'} | {cell(f['load_s'], unit=' s')} | "
            f"{cell(f['first_token_s_median'], unit=' s')} | "
            f"{cell(f['full_s_median'], unit=unit, scale=scale)} / "
            f"{cell(f['full_s_p95'], unit=unit, scale=scale)} |"
        )
    lines.append("")
    for name, f in data["configurations"].items():
        if name == "rules":
            continue
        alone = f["model_alone"]
        lines.append(
            f"  {name}: the model alone said link on {alone['said_link']} of {data['pairs']} "
            f"pairs: precision {cell(alone['precision'])}, recall {cell(alone['recall'])}, "
            f"right relationship {alone['relationship_right']}; outcomes {f['outcomes']}"
        )
    for profile, won in data["earned"].items():
        verdict = "yes" if won else "no: the rules' verdict is used"
        lines.append(f"  {data['profiles'][profile]}: earned link judging: {verdict}")
    return "\n".join(lines) + "\n"
