"""``mama demo``: the JWT → FAILED → sessions story, played on a temporary store.

It goes through the same service functions the MCP tools use, so what it prints is what the
product does: validation, privacy masking, supersession, the evolution chain and search.
Then it shows what Claude will see, by running the real hook code: the Stop hook's rolling
checkpoint after a turn, the next session's SessionStart cliffhanger (the command hook's own
entry point) and the UserPromptSubmit injection for a related and an unrelated prompt.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .config import Config
from .embeddings.protocol import EmbeddingModel
from .schema import OutcomeInput, parse
from .services.evolution import chain
from .services.learning.views import moves_text
from .services.render import render
from .services.saving.memories import save_checkpoint, save_decision, save_insight
from .services.saving.outcomes import record_outcome_event
from .services.search.indexing import drain
from .services.story import briefing
from .services.story.answers import search_by_context
from .storage import Store

PROJECT = "/demo/checkout-service"
QUESTION = "auth for a high-traffic service?"


def run_demo(
    *, keep: bool = False, embedder: EmbeddingModel | None = None, assistant: Any = None
) -> str:
    """Play the story on a fresh temporary store and return the transcript.

    ``embedder`` adds semantic search; without one the demo searches by keywords only.
    ``assistant`` (an :class:`~mama_plugin.assist.runtime.Assistant`) drafts and judges links;
    without one the deterministic extractor and the rules do.
    """
    home = Path(tempfile.mkdtemp(prefix="mama-demo-"))
    previous = os.environ.get("MAMA_HOME")
    os.environ["MAMA_HOME"] = str(home)
    try:
        config = Config(home)  # the demo's own world: a temporary MAMA_HOME
        with Store.open(config=config) as store:
            text = play(store, config, embedder=embedder, assistant=assistant)
            return text + (f"\n(store kept at {store.path})\n" if keep else "")
    finally:
        if previous is None:
            os.environ.pop("MAMA_HOME", None)
        else:
            os.environ["MAMA_HOME"] = previous
        if not keep:
            shutil.rmtree(home, ignore_errors=True)


def play(
    store: Store,
    config: Config,
    *,
    embedder: EmbeddingModel | None = None,
    assistant: Any = None,
) -> str:
    """Play the story into ``store`` (the store ``config`` names; project :data:`PROJECT`)
    and return the transcript: what ``mama demo`` prints, and the story ``mama view`` shows."""
    return _story(store, config, embedder) + _co_author(store, config, embedder, assistant)


def _story(store: Store, config: Config, embedder: EmbeddingModel | None) -> str:
    out = [f"MAMA demo — a temporary store at {store.path}\n"]
    jwt = save_decision(
        store,
        PROJECT,
        {
            "topic": "auth_strategy",
            "decision": "Use stateless JWT access tokens with refresh tokens for API auth",
            "reasoning": {
                "primary": "Stateless tokens let every API node verify requests without a shared "
                "session store, so the auth service scales horizontally",
                "alternatives_considered": [
                    {"option": "server-side sessions", "rejected_because": "needs a shared store"}
                ],
            },
            "specifics": ["access token TTL 15 min", "refresh token TTL 30 days"],
            "evidence": ["docs/auth-design.md:12-40"],
            "tension": {"risks": ["refresh traffic at peak load is unmeasured"]},
            "confidence": 0.8,
        },
    )
    out.append(f"1. Decision saved  {jwt.memory.id}: {jwt.memory.content}")
    work = save_checkpoint(
        store,
        PROJECT,
        {
            "summary": "JWT auth implemented behind the API gateway; load test scheduled",
            "what_was_done": ["token issuing and refresh endpoints", "gateway verification"],
            "what_remains": ["load test at 10K req/s"],
            "next_steps": [{"step": "run the 10K req/s load test", "priority": "HIGH"}],
            "open_files": ["src/auth/tokens.py", "benchmarks/auth.txt"],
            "implements": [jwt.memory.id],
        },
    )
    out.append(f"2. Checkpoint saved {work.memory.id}: {work.memory.content}")
    # The evolve_outcome tool's own path: the verdict, the event that dates it, the confidence
    # of the decision and of what rests on it moved, the notes on what builds on it.
    judged = record_outcome_event(
        store,
        parse(
            OutcomeInput,
            {
                "memory_id": jwt.memory.id,
                "outcome": "FAILED",
                "details": "Token refresh hit Postgres on every call: p99 307 ms at 10K req/s",
                "evidence": ["benchmarks/auth.txt:89-142"],
                "learned": [
                    "stateless tokens still need a revocation store, which is state after all"
                ],
            },
        ),
    )
    failed = judged.memory
    moved = moves_text(judged.changes)
    out.append(
        f"3. Outcome recorded: {failed.outcome_status} — {failed.outcome['details']} "
        f"(event {judged.event.id})"
    )
    if moved:
        out.append(f"   {moved}")
    sessions = save_decision(
        store,
        PROJECT,
        {
            "topic": "auth_strategy",
            "decision": "Server-side sessions in Redis for auth of the high-traffic API",
            "reasoning": "JWT failed at 10K req/s: token refresh hit the DB (p99 307 ms); a Redis "
            "session lookup is one round trip (p99 4 ms in the same load test)",
            "specifics": [
                "Redis 7, 2 GB",
                "session TTL 24 h",
                "connection: redis://auth:s3cr3t-pass@cache.internal:6379/0",
            ],
            "evidence": [{"source": "benchmarks/auth-redis.txt:1-60", "kind": "benchmark"}],
            "tension": {"risks": ["Redis is a single point of failure until HA is set up"]},
            "next_steps": [{"step": "set up Redis HA (sentinel)", "priority": "HIGH"}],
            "supersedes": jwt.memory.id,
            "confidence": 0.85,
        },
    )
    out.append(f"4. {sessions.summary()}")
    lesson = save_insight(
        store,
        PROJECT,
        {
            "topic": "auth_strategy",
            "content": (
                "Load-test auth at target traffic before committing: refresh paths hide DB hits"
            ),
            "links": [
                {
                    "to_id": jwt.memory.id,
                    "relationship": "learned from",
                    "reason": "the JWT load test exposed the refresh path's DB hit",
                }
            ],
        },
    )
    out.append(f"5. Insight saved   {lesson.memory.id}: {lesson.memory.content}\n")

    history = chain(store, jwt.memory.id)
    between = {
        (ln.from_id, ln.to_id): ln
        for m in history
        for ln in store.links.of(m.id, direction="out", categories=("evolution",))
    }
    out.append(
        render(
            "chain.txt.j2", config.home, topic="auth_strategy", chain=history, links_between=between
        )
    )
    if embedder is not None:
        embedded = drain(store, embedder)
        how = f"hybrid: keywords + {embedder.name}, {embedded} memories embedded after saving"
    else:
        how = "keywords only: no embedding model"
    result = search_by_context(store, QUESTION, embedder=embedder, project=PROJECT, k=5)
    out.append(f'Search "{QUESTION}" ({how}):')
    for rank, item in enumerate(result.primary_results, 1):
        out.append(f"  {rank}. [{item.mark}] {item.id} ({item.type}) {item.content}")
    out.append("\nWhat Claude reads back (narrative_summary):\n")
    out.append(result.narrative_summary)
    out.append(_what_claude_sees(store, config, embedder))
    return "\n".join(out) + "\n"


def write_transcript(folder: Path) -> Path:
    """A short Claude Code session transcript (its JSONL format): an edit, a run, a task."""
    lines: list[dict[str, object]] = [
        {
            "type": "user",
            "message": {"role": "user", "content": "Set up Redis HA for sessions"},
            "cwd": PROJECT,
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "TaskCreate",
                        "input": {
                            "subject": "Fail over to the replica in the load test",
                            "description": "",
                        },
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Edit",
                        "input": {"file_path": "/demo/checkout-service/infra/redis.tf"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t3",
                        "name": "Bash",
                        "input": {
                            "command": "make loadtest RATE=10000",
                            "description": "Load test",
                        },
                    },
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "Task #1 created"}
                ],
            },
            "toolUseResult": {"task": {"id": "1", "subject": "Fail over to the replica"}},
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "updated"}],
            },
            "toolUseResult": {"structuredPatch": [{"newStart": 12, "newLines": 19}]},
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t3", "content": "p99 4 ms"}],
            },
        },
    ]
    path = folder / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _what_claude_sees(store: Store, config: Config, embedder: EmbeddingModel | None) -> str:
    from .hooks.runner import run
    from .server.base import Env
    from .server.hook_table import PromptArgs, TurnArgs
    from .server.hook_tools import do_checkpoint_turn, do_observe_prompt

    out = ["\n=== What Claude will see (the real hook code) ===\n"]
    env = Env(store, PROJECT, embedder, config=config)
    last = (
        "Sentinel is configured (infra/redis.tf:12-30) and the load test holds p99 4 ms. "
        "Next: rehearse a failover. But the replica lags 2 s under peak load."
    )
    turn = TurnArgs(
        session_id="demo-session",
        cwd=PROJECT,
        last_assistant_message=last,
        transcript_path=str(write_transcript(store.path.parent)),
    )
    saved = do_checkpoint_turn(env, turn).data["checkpoint"]
    cp = store.memories.require(saved)
    out.append(f"Stop hook, after a turn: rolling checkpoint {cp.id} — {cp.content}\n")
    answer = io.StringIO()
    event = {"session_id": "next", "cwd": PROJECT, "source": "startup"}
    run("session-start", io.StringIO(json.dumps(event)), answer)
    context = json.loads(answer.getvalue())["hookSpecificOutput"]["additionalContext"]
    out.append("SessionStart hook, the next session (additionalContext):\n")
    out.append(_indent(context) + "\n")
    for prompt in ("Should the new mobile API use JWT tokens for auth?", "fix the typo in README"):
        text = do_observe_prompt(env, PromptArgs(prompt=prompt)).text
        injected = (
            json.loads(text)["hookSpecificOutput"]["additionalContext"] if text != "{}" else ""
        )
        out.append(f'UserPromptSubmit hook, prompt "{prompt}":')
        out.append(_indent(injected) if injected else "    (nothing: below the relevance bar)")
        out.append("")
    return "\n".join(out)


def _co_author(
    store: Store, config: Config, embedder: EmbeddingModel | None, assistant: Any
) -> str:
    """/mama-save with a draft, the save, the link MAMA proposes, its acceptance, the stats."""
    from .assist import suggest
    from .assist.draft import draft_narrative
    from .assist.models import draft_layers, link_judge
    from .schema import parse
    from .schema.assist import DraftRequest
    from .services.hygiene.stats import project_stats
    from .services.learning.living import told
    from .transcript import read_transcript

    out = ["=== The local model as co-author ===\n"]
    request = parse(
        DraftRequest,
        {
            "decision": "Redis Sentinel with one replica for the session store",
            "topic": "auth_strategy",
            "draft": True,
            "context": "Sentinel is configured because the single Redis node is a single point of "
            "failure for every login; the failover test holds p99 4 ms at 10K req/s. We "
            "considered Redis Cluster instead of Sentinel, but it needs client changes. "
            "But the replica lags 2 s under peak load. Next: rehearse a failover.",
        },
    )
    digest = read_transcript(store.path.parent / "session.jsonl")
    layers, skipped = draft_layers(config)
    draft = draft_narrative(request, digest, assistant=assistant, layers=layers, skipped=skipped)
    p = draft.proposal
    out.append(f"/mama-save → save_decision(draft=true), nothing saved yet. Model: {draft.model}")
    out.append(f"  reasoning [{draft.sources['reasoning']}]: {p['reasoning']['primary']}")
    for alt in p["reasoning"]["alternatives_considered"]:
        out.append(f"  alternative [{draft.sources['alternatives']}]: {alt['option']}")
    for concern in p["tension"]["concerns"]:
        out.append(f"  tension [{draft.sources['tension']}]: {concern}")
    evidence = "; ".join(f"{e['source']} — {e['detail']}" for e in p["evidence"])
    out.append(f"  evidence [{draft.sources['evidence']}]: {evidence}")
    if draft.dropped:
        out.append(f"  ({len(draft.dropped)} model item(s) dropped: not in the conversation)")
    saved = save_decision(store, PROJECT, p).memory
    out.append(f"Claude reviews it and saves it: {saved.id}\n")
    judge = link_judge(config, assistant)
    made = suggest.suggest_for(store, saved.id, assistant=judge, embedder=embedder)
    for s in made:
        out.append(f"Link suggested in the background (pending, judged by {s.judged_by}):")
        out.append(f"  #{s.id} {s.from_id} --{s.relationship}--> {s.to_id}: {s.reason}")
    if made:
        _, link = suggest.accept(store, made[0].id, decided_by="claude")
        accepted = f"link #{link.id}, reason by {link.created_by}"
        out.append(f"evolve_link accepts #{made[0].id}: {accepted}")
        noted = told(store, [link.to_id]).get(link.to_id, [])
        if noted:  # the older memory is not rewritten: it gains a dated note
            out.append(f"{link.to_id} gains a note: {noted[-1]}")
        out.append("")
    brief = briefing.brief(store, PROJECT, config, "startup")
    if "\n\nProposed links" in brief:  # what is still pending waits at the next session start
        pending = "Proposed links" + brief.split("\n\nProposed links", 1)[1].split("\n\n")[0]
        pending = pending.split("\n</mama-memory>")[0]  # the fence closes the story
        out.append("The next SessionStart lists the rest until someone decides:")
        out.append(_indent(pending) + "\n")
    stats = project_stats(store, PROJECT)
    reasons = stats.link_reasons
    rate = "—" if stats.acceptance_rate is None else f"{stats.acceptance_rate:.0%}"
    out.append(
        f"mama stats: {stats.decisions} decisions, non-trivial reasoning "
        f"{stats.non_trivial_reasoning or 0:.0%}, completeness {stats.completeness_mean or 0:.1f}/5"
        f", with an outcome {stats.with_outcome or 0:.0%}; link reasons causal {reasons['causal']}"
        f" / basic {reasons['basic']} / trivial {reasons['trivial']}; suggestions accepted {rate}"
    )
    return "\n".join(out) + "\n"


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())
