"""``python -m benchmarks draft``: how long the local model takes to co-author, and what it adds.

For each recorded Claude Code transcript (``tests/fixtures/transcripts`` in a checkout, or
``--transcripts DIR``) and each run, a fresh :class:`~mama_plugin.assist.runtime.Assistant`
loads the configured model (cold load), then drafts the transcript's decision: the seconds to
the first generated token, the whole draft (extraction, generation, grounding), tokens per
second. The deterministic extractor alone is timed in the same run as the baseline. Also
reported: the share of generations that gave schema-valid JSON, the share of model items kept
by grounding, where each draft's primary reason came from, and one link judgement per run.
``--threads N`` runs the model with N threads instead of ``assist_threads`` (0: all cores);
the load average at the start and the end is reported with the figures, since a busy machine
changes what the thread count costs.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mama_plugin.assist.draft import draft_narrative
from mama_plugin.assist.runtime import Assistant, Prompt
from mama_plugin.assist.suggest import EXAMPLES, INSTRUCTIONS, JUDGE_TOKENS
from mama_plugin.config import Config
from mama_plugin.embeddings.embedder import available_cores
from mama_plugin.errors import MamaError
from mama_plugin.schema import parse
from mama_plugin.schema.assist import DraftRequest, LinkJudgement
from mama_plugin.transcript import read_transcript

from .checkout import FIXTURES

# What each recorded session decided (the drafter is given the decision, as /mama-save does).
DECISIONS = {
    "jwt_to_sessions": "Replace JWT refresh with server-side sessions",
    "postgres_job_queue": "Use PostgreSQL for the job queue",
    "cache_invalidation": "Make the catalog cache write-through",
}
JUDGE_PAIR = (
    "OLDER: [decision] Use stateless JWT access tokens for API auth. Outcome FAILED: token "
    "refresh hit Postgres on every call, p99 307 ms at 10K req/s.\nNEWER: [decision] "
    "Server-side sessions in Redis for auth, because JWT refresh hit the database at 10K req/s."
)


def draft_run(
    runs: int, *, config: Config, folder: Path | None = None, threads: int | None = None
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures.

    ``threads`` overrides ``assist_threads`` (None: the config's; 0: all cores).
    """
    folder = folder or FIXTURES
    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not paths:
        raise MamaError(f"no transcripts (*.jsonl) in {folder}; pass --transcripts DIR")
    cases = []
    for path in paths:
        digest = read_transcript(path)
        decision = DECISIONS.get(path.stem) or (digest.last_request.split(".")[0][:200] or "?")
        cases.append(
            (path.stem, digest, parse(DraftRequest, {"decision": decision, "draft": True}))
        )

    load, first, full, rate, baseline, judge = [], [], [], [], [], []
    outcomes: Counter[str] = Counter()
    primary: Counter[str] = Counter()
    kept = dropped = 0
    name = ""
    load_before = _load_average()
    for _ in range(runs):
        assistant = Assistant(config, threads=threads)
        try:
            load.append(assistant.warm())
        except MamaError as exc:
            raise MamaError(f"bench draft needs the assist model: {exc}") from exc
        name = assistant.name
        for _stem, digest, request in cases:
            started = time.perf_counter()
            draft_narrative(request, digest, assistant=None)
            baseline.append(time.perf_counter() - started)
            started = time.perf_counter()
            draft = draft_narrative(request, digest, assistant=assistant)
            full.append(time.perf_counter() - started)
            gen = draft.generation
            if gen is not None:
                outcomes[gen.outcome] += 1
                if gen.first_token_s is not None:
                    first.append(gen.first_token_s)
                if gen.total_s and gen.tokens:
                    rate.append(gen.tokens / gen.total_s)
                if gen.value is not None:
                    items = 1 + len(gen.value.secondary) + len(gen.value.alternatives)
                    items += len(gen.value.concerns) + len(gen.value.next_steps)
                    dropped += len(draft.dropped)
                    kept += max(0, items - len(draft.dropped))
            primary[draft.sources.get("reasoning", "none")] += 1
        started = time.perf_counter()
        verdict = assistant.generate(
            Prompt(INSTRUCTIONS, EXAMPLES, JUDGE_PAIR), LinkJudgement, max_tokens=JUDGE_TOKENS
        )
        judge.append(time.perf_counter() - started)
        outcomes[verdict.outcome] += 1
        assistant.close()

    load_after = _load_average()
    total = sum(outcomes.values())
    chosen = config.settings.assist_threads if threads is None else threads
    data: dict[str, Any] = {
        "model": name,
        "threads": chosen or f"all cores ({available_cores()})",
        "load_average": [load_before, load_after],
        "transcripts": [c[0] for c in cases],
        "runs": runs,
        "load_s_median": _median(load),
        "first_token_s_median": _median(first),
        "draft_s_median": _median(full),
        "draft_s_max": round(max(full), 3) if full else None,
        "tokens_per_s_median": _median(rate),
        "extractor_only_s_median": _median(baseline),
        "judge_s_median": _median(judge),
        "schema_valid_share": round(outcomes["ok"] / total, 3) if total else None,
        "outcomes": dict(outcomes),
        "model_items_kept_share": round(kept / (kept + dropped), 3) if kept + dropped else None,
        "primary_reason_from": dict(primary),
    }
    ratio = (
        data["draft_s_median"] / data["extractor_only_s_median"]
        if data["extractor_only_s_median"]
        else float("nan")
    )
    lines = [
        f"Drafting with {name} ({data['threads']} threads), {len(cases)} recorded transcripts "
        f"× {runs} runs (medians), load average {load_before} → {load_after}",
        f"  model load (cold)        {data['load_s_median']:.2f} s",
        f"  first token              {data['first_token_s_median']:.2f} s",
        f"  full draft               {data['draft_s_median']:.2f} s "
        f"(max {data['draft_s_max']:.2f} s)",
        f"  generation speed         {data['tokens_per_s_median']:.1f} tokens/s "
        "(grammar-constrained)",
        f"  extractor alone          {data['extractor_only_s_median'] * 1000:.1f} ms "
        f"(the draft costs {ratio:.0f}× the no-model path)",
        f"  link judgement           {data['judge_s_median']:.2f} s per pair",
        f"  schema-valid JSON        {outcomes['ok']}/{total} generations {dict(outcomes)}",
        f"  model items kept         {kept}/{kept + dropped} after grounding",
        f"  primary reason from      {dict(primary)}",
    ]
    return "\n".join(lines) + "\n", data


def _load_average() -> float | None:
    """The one-minute load average (None where the system does not tell it)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4) if values else float("nan")
