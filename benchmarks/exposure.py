"""``python -m benchmarks exposure``: is every tool a turn needs on that turn's first model request?

Replays the scripted sessions of ``exposure_sessions.json`` through the server's own path:
each session gets a temporary store built by an earlier session (the story's state), a fresh
``State`` seeded as ``tools/list`` seeds it (``exposure_ready``), the prompt hook's
``observe_prompt`` on every prompt, the model's writes through the real tool handlers
followed by ``State.wrote`` as the server calls it, and the Stop hook's ``checkpoint_turn``
(the rolling checkpoint) after every turn. Claude Code reads a changed list only from the
request after the next one, so a turn's first request shows the list as it stood before the
turn's prompt. The exposure MAMA shipped before (``baselines/exposure_before_seeding.py``) is
replayed on the same prompts. Tool-definition tokens are estimated from the ``tools/list``
as Claude Code sends them (4 characters a token) against the full static list.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.schema import parse
from mama_plugin.server.catalogue import load
from mama_plugin.server.hook_table import HOOKS
from mama_plugin.server.state import State
from mama_plugin.server.tool_table import BY_NAME
from mama_plugin.server.tools import CLAUDE_PREFIX
from mama_plugin.text import estimate_tokens

from .baselines.exposure_before_seeding import TodayExposure
from .checkout import DATA
from .latency import percentile

SESSIONS = DATA / "exposure_sessions.json"
PROJECT = "bench-exposure"
CLIENT = "claude-code"


@dataclass
class Replay:
    """What one way of exposing tools did over the sessions."""

    turns: int = 0
    available: int = 0
    sessions_whole: int = 0  # sessions where every turn had what it needed
    changes: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)  # per first request
    missing: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)  # "session turn: tools"


def tokens_of(names: list[str]) -> int:
    """Estimated tokens of ``names`` as Claude Code sends them to the model: each tool's
    prefixed name, description and input schema (not its annotations: seen in the request
    bodies of tests/test_claude_code_exposure.py)."""
    catalogue = load()
    sent = [
        {
            "name": CLAUDE_PREFIX + n,
            "description": catalogue.definition(n)["description"],
            "input_schema": catalogue.definition(n)["inputSchema"],
        }
        for n in names
    ]
    return estimate_tokens(json.dumps(sent))


def _resolve(value: Any, payloads: dict[str, Any], ids: dict[str, Any]) -> Any:
    """A script value with ``@payload`` expanded and ``$id`` bound (recursively)."""
    if isinstance(value, str) and value.startswith("@"):
        return _resolve(payloads[value[1:]], payloads, ids)
    if isinstance(value, str) and value.startswith("$"):
        return ids[value[1:]]
    if isinstance(value, dict):
        base = _resolve(payloads[value["@"]], payloads, ids) if "@" in value else {}
        return {**base, **{k: _resolve(v, payloads, ids) for k, v in value.items() if k != "@"}}
    if isinstance(value, list):
        return [_resolve(v, payloads, ids) for v in value]
    return value


def _write(
    state: State, write: dict[str, Any], payloads: dict[str, Any], ids: dict[str, Any]
) -> None:
    """One write by the model, as the server runs it: the handler, then ``State.wrote``."""
    args = _resolve(write["args"], payloads, ids)
    if write["tool"] == "propose_link":  # the background suggester's work, done directly
        found = state.store.suggestions.add(PROJECT, judged_by="rules", **args)
        if found is None:  # a save on a topic with a current decision proposed it already
            pair = (args["from_id"], args["to_id"], args["relationship"])
            asked = state.store.suggestions.of_project(PROJECT, memory_id=args["from_id"])
            found = next(s for s in asked if (s.from_id, s.to_id, s.relationship) == pair)
        made: Any = found.id
    else:
        tool = BY_NAME[write["tool"]]
        answer = tool.handler(state.env(), parse(tool.model, args))
        made = answer.data.get("id")
        if not tool.read_only:
            state.wrote()
    if write.get("as"):
        ids[write["as"]] = made


def _hook(state: State, name: str, arguments: dict[str, Any]) -> None:
    """A hook's call of a hidden tool: its arguments read and its handler run as the server
    does, without the deadline (every call runs to its end, so each run counts the same)."""
    hook = HOOKS[name]
    hook.handler()(state.env(), hook.read(arguments))


def _prompt(text: str, ids: dict[str, Any]) -> str:
    for name, value in ids.items():
        text = text.replace(f"${name}", str(value))
    return text


def _score(
    replay: Replay, session: dict[str, Any], turn: int, needs: list[str], listed: list[str]
) -> bool:
    replay.turns += 1
    replay.tokens.append(tokens_of(listed))
    missing = [n for n in needs if n not in listed]
    if missing:
        replay.missing.update(missing)
        replay.misses.append(f"{session['id']} turn {turn + 1}: {', '.join(missing)}")
        return False
    replay.available += 1
    return True


def _after_writes(
    replay: Replay,
    session: dict[str, Any],
    turn: int,
    needs: list[str],
    listed: list[str],
    served: bool,
) -> bool:
    """Whether the turn, ``served`` on its first request, also finds what it calls after its
    writes; a turn that does not is no longer counted as served."""
    missing = [n for n in needs if n not in listed]
    if not missing:
        return served
    replay.missing.update(missing)
    replay.misses.append(f"{session['id']} turn {turn + 1} after its writes: {', '.join(missing)}")
    replay.available -= served
    return False


def _replay_session(
    session: dict[str, Any],
    data: dict[str, Any],
    config: Config,
    folder: Path,
    ours: Replay,
    today: Replay,
    seeding_ms: list[float],
    initial: dict[str, list[str]],
) -> None:
    db = folder / f"{session['id']}.db"
    ids: dict[str, Any] = {}
    earlier = State(config, PROJECT, db)  # the session that left the store as the story says
    try:
        for write in data["stores"][session["store"]]:
            _write(earlier, write, data["payloads"], ids)
    finally:
        earlier.close()
    state = State(config, PROJECT, db)
    baseline = TodayExposure()
    try:
        started = time.perf_counter()
        state.exposure_ready()  # what tools/list does before answering
        seeding_ms.append((time.perf_counter() - started) * 1000)
        initial.setdefault(session["store"], state.exposure.listed(CLIENT))
        whole = [True, True]
        for number, turn in enumerate(session["turns"]):
            prompt = _prompt(turn["prompt"], ids)
            first = state.exposure.listed(CLIENT)  # before this turn's prompt hook
            served = _score(ours, session, number, turn["needs"], first)
            listed_today = [n for n in load().listed if n in baseline.visible]
            served_today = _score(today, session, number, turn["needs"], listed_today)
            _hook(state, "observe_prompt", {"prompt": prompt, "session_id": session["id"]})
            baseline.observe(prompt)
            for write in turn["writes"]:
                _write(state, write, data["payloads"], ids)
            # The writes' answers waited for the list they grew: what the turn calls next sees
            # it (the baseline's Claude Code read it one request later: one after the writes).
            later, after = state.exposure.listed(CLIENT), turn.get("after_writes", [])
            served = _after_writes(ours, session, number, after, later, served)
            served_today = _after_writes(today, session, number, after, listed_today, served_today)
            whole[0] &= served
            whole[1] &= served_today
            # Stop: the session's rolling checkpoint (its own record, not earlier work).
            done = {"session_id": session["id"], "last_assistant_message": "Done: " + prompt}
            _hook(state, "checkpoint_turn", done)
        ours.changes.append(state.exposure.changes)
        today.changes.append(baseline.changes)
        ours.sessions_whole += whole[0]
        today.sessions_whole += whole[1]
    finally:
        state.close()


def exposure_run(config: Config, sessions: Path | None = None) -> tuple[str, dict[str, Any]]:
    """Replay every scripted session both ways; the report and every figure."""
    data = json.loads((sessions or SESSIONS).read_text(encoding="utf-8"))
    ours, today = Replay(), Replay()
    seeding_ms: list[float] = []
    initial: dict[str, list[str]] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mama-bench-exposure-") as folder:
        for session in data["sessions"]:
            _replay_session(session, data, config, Path(folder), ours, today, seeding_ms, initial)
    static = list(load().listed)
    static_tokens = tokens_of(static)
    langs = Counter(s["lang"] for s in data["sessions"])
    figures = {
        "sessions": len(data["sessions"]),
        "turns": ours.turns,
        "languages": dict(langs),
        "static_list_tokens": static_tokens,
        "seeding_p50_ms": round(percentile(seeding_ms, 50), 2),
        "seeding_p95_ms": round(percentile(seeding_ms, 95), 2),
        "load_average": round(max(load_before, os.getloadavg()[0]), 2),
        "initial_lists": {
            state: {"tools": names, "tokens": tokens_of(names)} for state, names in initial.items()
        },
    }
    for name, replay in (("seeded", ours), ("today", today)):
        mean_tokens = statistics.mean(replay.tokens)
        figures[name] = {
            "first_request_availability": round(replay.available / replay.turns, 4),
            "turns_available": replay.available,
            "sessions_whole": replay.sessions_whole,
            "changes_max": max(replay.changes),
            "changes_mean": round(statistics.mean(replay.changes), 3),
            "sessions_with_a_change": sum(1 for c in replay.changes if c),
            "tool_tokens_mean": round(mean_tokens),
            "tool_tokens_saved": round(1 - mean_tokens / static_tokens, 4),
            "missing": dict(replay.missing.most_common()),
            "misses": replay.misses,
        }
    return _report(figures), figures


def _report(f: dict[str, Any]) -> str:
    s, t = f["seeded"], f["today"]
    rows = [
        (
            "first-request availability",
            *(
                f"{r['turns_available']}/{f['turns']} ({r['first_request_availability']:.1%})"
                for r in (t, s)
            ),
        ),
        (
            "sessions with every turn served",
            *(f"{r['sessions_whole']}/{f['sessions']}" for r in (t, s)),
        ),
        (
            "list changes per session",
            *(f"max {r['changes_max']}, mean {r['changes_mean']:.2f}" for r in (t, s)),
        ),
        ("sessions whose list changed", *(f"{r['sessions_with_a_change']}" for r in (t, s))),
        (
            "tool tokens per first request",
            *(f"{r['tool_tokens_mean']:,} ({r['tool_tokens_saved']:.1%} saved)" for r in (t, s)),
        ),
    ]
    lines = [
        f"Tool exposure: {f['sessions']} scripted sessions, {f['turns']} turns "
        f"({', '.join(f'{n} {lang}' for lang, n in f['languages'].items())}); "
        f"static list {f['static_list_tokens']:,} tokens; load average {f['load_average']}",
        f"{'':34}{'today (main)':>28}{'seeded (this build)':>28}",
        *(f"{label:34}{a:>28}{b:>28}" for label, a, b in rows),
        "missing on first requests: today "
        + (", ".join(f"{n} ×{c}" for n, c in t["missing"].items()) or "none")
        + "; seeded "
        + (", ".join(f"{n} ×{c}" for n, c in s["missing"].items()) or "none"),
        *(f"  seeded miss: {m}" for m in s["misses"]),
        "initial list by store state (Claude Code):",
        *(
            f"  {state:10} {v['tokens']:>5,} tokens: {', '.join(v['tools'])}"
            for state, v in f["initial_lists"].items()
        ),
        f"seeding (store open + state look-ups): p50 {f['seeding_p50_ms']} ms, "
        f"p95 {f['seeding_p95_ms']} ms",
    ]
    return "\n".join(lines) + "\n"
