"""The hidden tools Claude Code's ``mcp_tool`` hooks call on the running server.

UserPromptSubmit → ``observe_prompt``: memories this prompt clearly touches (fenced as data,
within ``prompt_tokens``, silent below ``relevance_bar``; ``services.prompt_context``)
and the conversation context that grows the listed tools. Stop → ``checkpoint_turn``: the
session's rolling checkpoint (its lines retold by the model later, in the background).

A hook reads only the text of the result, as its JSON output: ``{}`` says nothing. Each
handler's ``@hook`` (:mod:`.declare`) names its tool and event; the hook table
(:mod:`.hook_table`) says how their arguments are read; the hook
lane (:mod:`.hook_lane`) runs them under a deadline and turns any failure into ``{}`` (fail
open). Nothing here imports pydantic.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config import OVERRIDES, Config
from ..embeddings.cards import reads_korean
from ..envelope import SILENT, answer
from ..services.recall import context as prompt_context
from ..services.recall.judge import can_recall
from ..services.search.options import options_for
from ..services.story import shown
from ..text import hangul
from ..transcript import TURN_LIMIT_S, Digest
from .base import Answer, Env
from .declare import hook

if TYPE_CHECKING:
    from .hook_table import PromptArgs, TurnArgs

log = logging.getLogger("mama.hooks")
ASK_REASON = (
    "Before you stop: this turn changed files and no checkpoint was saved this session. Save "
    "one with save_checkpoint (what was done, what remains, the next step with its context, "
    "the unresolved tension; implements=[decision ids]), then stop. Do not start new work."
)
# A session's first prompt may arrive while the embedding model still loads (~0.3 s after the
# server starts): it waits this long for it, well inside the hook's deadline
# (hook_table.HOOK_DEADLINE_S), so it is matched by meaning and not by keywords alone.
EMBEDDER_WAIT_S = 1.5

# Seconds the Stop hook waits for the turn's last transcript entries; MAMA_TURN_WAIT_S=0 reads
# once without waiting (what `python -m benchmarks turns` compares against).
TURN_WAIT_ENV = OVERRIDES["turn_wait_s"]


# The memories this prompt touches, and the conversation's context for tool exposure.
@hook("observe_prompt", "UserPromptSubmit")
def do_observe_prompt(env: Env, args: PromptArgs) -> Answer:
    """UserPromptSubmit: recall what the prompt touches; note the context for tool exposure."""
    if args.session_id:
        env.session.id = args.session_id
        env.session.prompts[args.session_id] = args.prompt
        if args.transcript_path:
            env.session.transcripts[args.session_id] = args.transcript_path
    context, added = env.observe(args.prompt)
    if not env.config.project_enabled(env.project) or not can_recall(args.prompt):
        return Answer(SILENT, {"context": context, "tools_added": added, "memories": []})
    started = time.monotonic()
    # At once when the model is ready (or absent); bounded while it still loads.
    embedder = env.embedder if env.embedder_within is None else env.embedder_within(EMBEDDER_WAIT_S)
    waited = time.monotonic() - started
    # A Korean prompt the model cannot read is read by one that can (made on the first).
    needs = hangul(args.prompt) and not reads_korean(getattr(embedder, "name", ""))
    # The prompt is embedded here, in the hook's call: its vector is never deferred.
    injected = prompt_context.prompt_context(
        env.store,
        args.prompt,
        project=env.project,
        budget=env.config.settings.prompt_tokens,
        bar=env.config.settings.relevance_bar,
        embedder=embedder,
        shown=shown.session_shown(
            env.session.shown, env.store, env.project, args.session_id, env.config
        ),
        reader=env.reader_of() if needs else None,
        options=options_for(env.config.settings.ranking),
    )
    log.info(
        "observe_prompt: %d memories recalled by %s (waited %.2f s for the model, %.2f s in "
        "all; %d more already told this session; %d pointed at)",
        len(injected.hits),
        "vectors" if injected.used_vectors else "keywords",
        waited,
        time.monotonic() - started,
        len(injected.skipped),
        len(injected.pointers),
    )
    data = {
        "context": context,
        "tools_added": added,
        "memories": injected.hits,
        "pointers": injected.pointers,
    }
    return Answer(answer("UserPromptSubmit", injected.text), data)


# This session's rolling checkpoint, upserted after every turn.
@hook("checkpoint_turn", "Stop")
def do_checkpoint_turn(env: Env, args: TurnArgs) -> Answer:
    """Stop: upsert the rolling checkpoint; in ``ask`` mode, ask Claude once for a real one."""
    if args.session_id:
        env.session.id = args.session_id
        if args.transcript_path:
            env.session.transcripts[args.session_id] = args.transcript_path
    mode = env.config.settings.stop_mode
    if mode == "off" or not env.config.project_enabled(env.project):
        return Answer(SILENT, {"checkpoint": None})
    autosave, lines_earned, PendingLines = turn_modules()
    digest = Digest()
    if args.transcript_path:
        # A copy: the reader is the session's, and a draft may read on into it meanwhile
        # (the store lock that once serialised the two is gone).
        reader = env.session.reader(args.transcript_path)
        waited = reader.settle_turn(args.last_assistant_message, limit_s=_turn_wait(env.config))
        if waited >= 0.5:
            log.info("checkpoint_turn waited %.2f s for the transcript", waited)
        digest = reader.copy()
    saved = autosave.checkpoint_turn(
        env.store,
        env.project,
        session_id=args.session_id,
        digest=digest,
        last_message=args.last_assistant_message,
        cwd=args.cwd,
        request=env.session.prompts.get(args.session_id, ""),
    )
    env.session.brief_stale(env.project)  # re-rendered in the background
    if saved is not None and args.session_id and lines_earned(env.config):
        # Queued only (no model on a hook's path), in the store too: a server that stops
        # before the job runs leaves it to the next one (server.lines_job). A profile that
        # earned no line (the default) queues nothing: the extractor's lines stand.
        PendingLines(env.store).add(args.session_id, env.project, saved.id, saved.version)
        env.session.lines_later(args.session_id)
    data = {"checkpoint": saved.id if saved else None}
    if mode == "ask" and not args.continuing and digest.changed():
        written = [
            m
            for m in env.store.memories.of_session(args.session_id, type="checkpoint")
            if not m.rolling
        ]
        if not written:
            return Answer(json.dumps({"decision": "block", "reason": ASK_REASON}), data)
    return Answer(SILENT, data)


def turn_modules() -> tuple[Any, Callable[[Config], frozenset[str]], Any]:
    """What the Stop hook's handler needs and the prompt's does not (the rolling checkpoint's
    writer, the assist model's profiles: ~20 ms of imports), loaded by the first Stop or by
    the warm-up once the first hook call is answered, never before the first prompt's answer."""
    from ..assist.models import lines_earned
    from ..services.story import autosave
    from ..storage.pending_lines import PendingLines

    return autosave, lines_earned, PendingLines


def _turn_wait(config: Config) -> float:
    """The Stop hook's bound on waiting for the transcript (``$MAMA_TURN_WAIT_S`` as the
    process's Config read it, else the default)."""
    try:
        wait = float(config.overrides.get("turn_wait_s", TURN_LIMIT_S))
    except ValueError:
        return TURN_LIMIT_S
    return min(max(wait, 0.0), TURN_LIMIT_S * 2)
