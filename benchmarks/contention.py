"""``python -m benchmarks contention``: is a prompt's hook slowed while the model drafts?

One server's state in this process (:class:`~mama_plugin.server.state.State`, a synthetic
store of ``--size`` memories, the real embedder warm) answers ``observe_prompt`` through its
hook runner, as the front does for Claude Code's UserPromptSubmit hook, ``--prompts`` times
per mode, a prompt every ``--gap-ms``. The modes take turns, each round starting with the
next one:

- ``no model job``: nothing else runs;
- ``draft running (server)``: a model worker (:class:`~mama_plugin.assist.jobs.ModelJobs`)
  drafts the recorded transcripts back to back as the server's does: nicer by
  ``assist_nice``, pausing between tokens while a hook runs;
- ``draft running (nice only)`` and ``draft running (no pause, nice 0)``: the same drafts
  without the pause, then without either.

Reported per mode: the hook's p50, p95 and max, the model's tokens per second meanwhile and how
often it paused for a hook; with the model, its threads and the load average.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from mama_plugin.assist.draft import ask, read
from mama_plugin.assist.jobs import ModelJobs
from mama_plugin.assist.models import resolve_model
from mama_plugin.assist.runtime import Assistant
from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.schema import parse
from mama_plugin.schema.assist import DraftRequest
from mama_plugin.server.state import State
from mama_plugin.transcript import read_transcript

from .checkout import FIXTURES
from .draft import DECISIONS, _load_average
from .latency import PROJECT, build, percentile
from .synthetic import QUERIES


@dataclass(frozen=True)
class Mode:
    """What runs beside the prompts: no model (``drafting`` False), or drafts with or without
    the pause for hooks, at ``nice`` (None: ``assist_nice``)."""

    name: str
    drafting: bool
    pause: bool = False
    nice: int | None = None


MODES = (
    Mode("no model job", drafting=False),
    Mode("draft running (server)", drafting=True, pause=True),
    Mode("draft running (nice only)", drafting=True, pause=False),
    Mode("draft running (no pause, nice 0)", drafting=True, pause=False, nice=0),
)


class _Drafting:
    """Drafts the recorded transcripts back to back on ``jobs`` until stopped."""

    def __init__(self, jobs: ModelJobs) -> None:
        self.jobs = jobs
        self.tokens = 0
        self.drafts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.prompts = []
        for stem, decision in DECISIONS.items():
            request = parse(DraftRequest, {"decision": decision, "draft": True})
            prompt = read(request, read_transcript(FIXTURES / f"{stem}.jsonl")).prompt
            assert prompt is not None
            self.prompts.append(prompt)

    def __enter__(self) -> _Drafting:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            prompt = self.prompts[self.drafts % len(self.prompts)]
            generation = self.jobs.submit(partial(ask, prompt=prompt, timeout_s=120))
            generation.wait()
            self.tokens += generation.take().tokens
            self.drafts += 1


def contention_run(
    prompts: int,
    *,
    config: Config,
    embedder: EmbeddingModel | None,
    size: int = 1000,
    rounds: int = 4,
    gap_ms: float = 50.0,
    progress: Any = None,
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures."""
    say = progress or (lambda _line: None)
    names = [mode.name for mode in MODES]
    timings: dict[str, list[float]] = {name: [] for name in names}
    spent: dict[str, float] = dict.fromkeys(names, 0.0)
    tokens: dict[str, int] = dict.fromkeys(names, 0)
    paused: dict[str, int] = dict.fromkeys(names, 0)
    load_before = _load_average()
    with tempfile.TemporaryDirectory(prefix="mama-bench-contention-") as tmp:
        state = State(config, PROJECT, Path(tmp) / "bench.db")
        say(f"building {size:,} memories")
        build(state.store, size, embedder)
        state.embedder = embedder
        state.embedder_ready.set()
        assistant = Assistant(config, gate=state.hook_gate)
        say(f"loading the assist model ({assistant.warm():.1f} s)")
        # One worker per nice value (a thread cannot be made less nice again).
        workers = {
            mode.name: ModelJobs(lambda: assistant, nice=mode.nice)
            for mode in MODES
            if mode.drafting
        }
        for query in QUERIES[:5]:  # the lanes' threads, connections and caches warm
            state.hooks.call("observe_prompt", {"prompt": query, "session_id": "warm"})
        try:
            for turn in range(rounds):
                first = turn % len(MODES)  # each round starts with another mode: no order bias
                for mode in MODES[first:] + MODES[:first]:
                    say(f"round {turn + 1}/{rounds}: {mode.name}")
                    assistant.gate = state.hook_gate if mode.pause else None
                    paused_before = state.hook_gate.paused
                    started = time.monotonic()
                    if not mode.drafting:
                        timings[mode.name] += _prompts(state, prompts, gap_ms)
                    else:
                        with _Drafting(workers[mode.name]) as drafting:
                            timings[mode.name] += _prompts(state, prompts, gap_ms)
                        tokens[mode.name] += drafting.tokens
                    spent[mode.name] += time.monotonic() - started
                    paused[mode.name] += state.hook_gate.paused - paused_before
        finally:
            for jobs in workers.values():
                jobs.close()
            state.close()
    data: dict[str, Any] = {
        "model": assistant.name,
        "model_file": resolve_model(config).name,
        "threads": assistant.threads,
        "cores": os.cpu_count(),
        "load_average": [load_before, _load_average()],
        "memories": size,
        "embedder": embedder.name if embedder else None,
        "prompts_per_mode": prompts * rounds,
        "gap_ms": gap_ms,
        "modes": {
            mode: {
                "p50_ms": round(percentile(timings[mode], 50), 2),
                "p95_ms": round(percentile(timings[mode], 95), 2),
                "max_ms": round(max(timings[mode]), 2),
                "mean_ms": round(statistics.fmean(timings[mode]), 2),
                "model_tokens_per_s": round(tokens[mode] / spent[mode], 1) if tokens[mode] else 0,
                "model_paused": paused[mode],
                "model_nice": workers[mode].nice if mode in workers else None,
            }
            for mode in names
        },
    }
    return _report(data), data


def _prompts(state: State, count: int, gap_ms: float) -> list[float]:
    """``count`` observe_prompt calls through the hook runner, ``gap_ms`` apart; their ms."""
    took = []
    for i in range(count):
        started = time.perf_counter()
        state.hooks.call(
            "observe_prompt", {"prompt": QUERIES[i % len(QUERIES)], "session_id": "bench"}
        )
        took.append((time.perf_counter() - started) * 1000)
        time.sleep(gap_ms / 1000)
    return took


def _report(d: dict[str, Any]) -> str:
    lines = [
        f"observe_prompt through the hook runner, {d['prompts_per_mode']} prompts per mode "
        f"{d['gap_ms']:g} ms apart, {d['memories']:,} memories (embedder {d['embedder']}); "
        f"model {d['model']} ({d['model_file']}), {d['threads']} thread(s), {d['cores']} cores, "
        f"load average {d['load_average'][0]} → {d['load_average'][1]}",
        "",
        "| mode | p50 ms | p95 ms | max ms | model tokens/s | model paused | model nice |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, m in d["modes"].items():
        lines.append(
            f"| {mode} | {m['p50_ms']} | {m['p95_ms']} | {m['max_ms']} | "
            f"{m['model_tokens_per_s'] or '—'} | {m['model_paused'] or '—'} | "
            f"{'—' if m['model_nice'] is None else m['model_nice']} |"
        )
    return "\n".join(lines) + "\n"
