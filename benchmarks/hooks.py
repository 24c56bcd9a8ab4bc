"""``python -m benchmarks hooks``: hook latency at scale and the tokens the hooks inject.

- SessionStart is a command hook: each run spawns ``python -m mama_plugin.hooks
  session-start`` as Claude Code does and times the process, once with the cliffhanger
  cached (the server re-renders it after every turn) and once rendered on the spot; a bare
  ``python -c pass`` is timed in the same run as the machine's baseline.
- UserPromptSubmit and Stop are ``mcp_tool`` hooks: Claude Code sends ``tools/call`` to the
  running server, so each run times that request's round trip over a real ``mama serve``
  stdio pipe, with the embedding model warm.
- Tokens are estimated as characters / 4 (``briefing.estimate_tokens``).
- The relevance bar is scored on the labelled ``recall_prompts.json`` with real embeddings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.saving.memories import record_outcome, save_decision
from mama_plugin.services.search import indexing
from mama_plugin.services.story import briefing
from mama_plugin.storage import Store

from .checkout import DATA
from .latency import PROJECT, build, percentile
from .startup import bare_python
from .stdio import StdioServer
from .synthetic import QUERIES

UNRELATED = (
    "yes",
    "run the tests",
    "fix the typo in the README",
    "thanks, looks good",
    "rename tmp to result in utils.py",
    "add a docstring to parse_date",
    "commit this with a good message",
    "explain what a decorator is",
    "format the code",
    "why is the sky blue?",
)
TARGETS_MS = {"session_start": 150, "user_prompt_submit": 30, "stop": 50}
LABELLED = DATA / "recall_prompts.json"


def _spawn_hook(event: dict[str, Any], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mama_plugin.hooks", "session-start"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if not proc.stdout:
        return elapsed, ""
    return elapsed, str(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])


def _context(result: dict[str, Any]) -> str:
    text = result["content"][0]["text"]
    return "" if text == "{}" else str(json.loads(text)["hookSpecificOutput"]["additionalContext"])


def _append_turn(transcript: Path, text: str) -> None:
    """Claude's closing words of a turn, appended to the transcript as Claude Code writes them
    (the Stop hook waits until they are in the file, at most ``turn_wait_s``)."""
    content = [{"type": "text", "text": text}]
    entry = {"type": "assistant", "message": {"role": "assistant", "content": content}}
    with transcript.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1)}


def relevance_check(embedder: EmbeddingModel | None) -> dict[str, Any]:
    """Recall and silence of the prompt-time bar on the labelled prompt set."""
    from mama_plugin.services.recall.context import prompt_context

    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    with (
        tempfile.TemporaryDirectory(prefix="mama-bench-recall-") as home,
        Store.open(Path(home) / "recall.db", config=Config(Path(home))) as store,
    ):
        ids: list[str] = []
        for m in data["memories"]:
            item = {"topic": m["topic"], "decision": m["decision"], "reasoning": m["reasoning"]}
            if "supersedes" in m:
                item["supersedes"] = ids[m["supersedes"]]
            ids.append(save_decision(store, "/labelled", item).memory.id)
            if "outcome" in m:
                record_outcome(
                    store,
                    {"memory_id": ids[-1], "outcome": m["outcome"][0], "details": m["outcome"][1]},
                )
        if embedder is not None:
            indexing.drain(store, embedder)
        config = Config(Path(home))
        budget, bar = config.settings.prompt_tokens, config.settings.relevance_bar

        def injected(prompt: str) -> str:
            return prompt_context(
                store, prompt, project="/labelled", budget=budget, bar=bar, embedder=embedder
            ).text

        related = [p for p in data["prompts"] if p[1]]
        unrelated = [p for p in data["prompts"] if not p[1]]
        recalled = sum(f", {t}, " in injected(p) for p, t in related)
        silent = sum(not injected(p) for p, _ in unrelated)
    return {
        "related": len(related),
        "recalled": recalled,
        "unrelated": len(unrelated),
        "silent": silent,
    }


def hooks_run(
    size: int, embedder: EmbeddingModel | None, *, runs: int = 30, progress: Any = None
) -> tuple[str, dict[str, Any]]:
    """Measure the three hooks at ``size`` memories; return the report and its figures."""
    from mama_plugin.demo import write_transcript

    say = progress or (lambda _line: None)
    with tempfile.TemporaryDirectory(prefix="mama-bench-hooks-") as home:
        env = {**os.environ, "MAMA_HOME": home, "CLAUDE_CONFIG_DIR": str(Path(home) / "claude")}
        config = Config(Path(home))
        say(f"building {size:,} memories")
        with Store.open(config=config) as store:
            build(store, size, embedder)
            briefing.refresh(store, PROJECT, config)
        event = {"session_id": "bench", "cwd": PROJECT, "hook_event_name": "SessionStart"}
        say(f"SessionStart × {runs}, cached and rendered")
        cached, cold, tokens = [], [], {}
        for source in ("startup", "resume"):
            _, text = _spawn_hook({**event, "source": source}, env)
            tokens[source] = briefing.estimate_tokens(text)
        bare = [bare_python() for _ in range(runs)]
        for _ in range(runs):
            cached.append(_spawn_hook({**event, "source": "startup"}, env)[0])
            with Store.open(config=config) as store:  # throw the cache away: render in the hook
                store.conn.execute("DELETE FROM meta WHERE key LIKE 'brief:%'")
            cold.append(_spawn_hook({**event, "source": "startup"}, env)[0])
        say("UserPromptSubmit and Stop through a running mama serve")
        server = StdioServer({**env, "CLAUDE_PROJECT_DIR": PROJECT}, project=PROJECT)
        try:
            warm = embedder is None
            deadline = time.monotonic() + 120
            while not warm and time.monotonic() < deadline:  # until the model answers too
                _, result = server.call("observe_prompt", {"prompt": QUERIES[0]})
                memories = (result.get("structuredContent") or {}).get("memories") or []
                warm = any(m.get("cosine") is not None for m in memories)
                time.sleep(0.2)
            prompts = [*QUERIES, *UNRELATED]
            prompt_ms, prompt_tokens = [], []
            for i in range(max(runs, len(prompts))):
                ms, result = server.call(
                    "observe_prompt", {"prompt": prompts[i % len(prompts)], "session_id": "bench"}
                )
                prompt_ms.append(ms)
                prompt_tokens.append(briefing.estimate_tokens(_context(result)))
            transcript = write_transcript(Path(home))
            stop_ms = []
            for i in range(runs):
                said = f"Turn {i}: load test holds. Next: failover."
                _append_turn(transcript, said)  # in the file when Stop fires, as Claude Code's
                ms, _ = server.call(
                    "checkpoint_turn",
                    {
                        "session_id": "bench",
                        "transcript_path": str(transcript),
                        "cwd": PROJECT,
                        "last_assistant_message": said,
                        "stop_hook_active": "false",
                    },
                )
                stop_ms.append(ms)
        finally:
            server.close()
    silent_share = sum(1 for t in prompt_tokens if t == 0) / len(prompt_tokens)
    data: dict[str, Any] = {
        "memories": size,
        "runs": runs,
        "embedder": embedder.name if embedder else None,
        "model_warm": warm,
        "session_start_cached_ms": _stats(cached),
        "session_start_rendered_ms": _stats(cold),
        "bare_python_ms": _stats(bare),
        "user_prompt_submit_ms": _stats(prompt_ms),
        "stop_ms": _stats(stop_ms),
        "tokens_session_start": tokens,
        "tokens_per_prompt": {
            "median": percentile(prompt_tokens, 50),
            "p95": percentile(prompt_tokens, 95),
            "silent_share": round(silent_share, 2),
        },
        "relevance": relevance_check(embedder),
        "targets_p95_ms": TARGETS_MS,
    }
    return _report(data), data


def _report(d: dict[str, Any]) -> str:
    rel, tp = d["relevance"], d["tokens_per_prompt"]
    lines = [
        f"Hook latency at {d['memories']:,} memories ({d['runs']} runs each; embedder "
        f"{d['embedder'] or 'none (keywords only)'}; tokens ≈ characters / 4)",
        "",
        "| hook | how timed | p50 ms | p95 ms | target p95 |",
        "|---|---|---|---|---|",
        f"| SessionStart (cached) | process | {d['session_start_cached_ms']['p50']} | "
        f"{d['session_start_cached_ms']['p95']} | ≤ {d['targets_p95_ms']['session_start']} |",
        f"| SessionStart (rendered in the hook) | process | "
        f"{d['session_start_rendered_ms']['p50']} | {d['session_start_rendered_ms']['p95']} | "
        f"≤ {d['targets_p95_ms']['session_start']} |",
        f"| bare `python -c pass` (baseline) | process | {d['bare_python_ms']['p50']} | "
        f"{d['bare_python_ms']['p95']} | |",
        f"| UserPromptSubmit (observe_prompt) | tools/call round trip | "
        f"{d['user_prompt_submit_ms']['p50']} | {d['user_prompt_submit_ms']['p95']} | "
        f"≤ {d['targets_p95_ms']['user_prompt_submit']} |",
        f"| Stop (checkpoint_turn) | tools/call round trip | {d['stop_ms']['p50']} | "
        f"{d['stop_ms']['p95']} | ≤ {d['targets_p95_ms']['stop']} |",
        "",
        f"Tokens injected: session start {d['tokens_session_start']['startup']} (startup), "
        f"{d['tokens_session_start']['resume']} (resume/compact); per prompt median "
        f"{tp['median']:.0f}, p95 {tp['p95']:.0f}, silent on {tp['silent_share']:.0%} of prompts.",
        f"Relevance bar on recall_prompts.json: recalled {rel['recalled']}/{rel['related']} "
        f"related prompts, silent on {rel['silent']}/{rel['unrelated']} unrelated ones.",
    ]
    return "\n".join(lines) + "\n"
