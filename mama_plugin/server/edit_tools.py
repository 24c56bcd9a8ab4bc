"""The tools that forget, correct or move a memory: ``forget_memory``, ``update_memory`` and
``promote_memory``.

The first two rewrite the store's file and every backup (services/hygiene/forgetting.py):
seconds on a large store, so they run in a worker thread (:attr:`Tool.slow`), which has its
own connection.
"""

from __future__ import annotations

from ..schema import ForgetInput, PromoteInput, UpdateInput
from ..services.hygiene.forgetting import edit, forget
from ..services.saving.scopes import demote, promote
from .base import Answer, Env
from .declare import Hints, tool

# Rewriting the store's file and every backup: seconds on a large store.
_REWRITES = Hints(read_only=False, slow=True, destructive=True, contexts=("editing",))


@tool(
    "update_memory",
    "Correct a memory's narrative (topic, content, reasoning, specifics, evidence, tension, "
    "tags, confidence) at the version you read it; if it changed since, nothing is written "
    "and both versions are shown.",
    _REWRITES,
)
def do_update(env: Env, args: UpdateInput) -> Answer:
    """Correct a memory read at ``expected_version``; a stale version is a conflict (error)."""
    done = edit(env.store, env.config, args)
    env.session.brief_stale(env.project)
    m = done.memory
    data = {"id": m.id, "version": m.version, "before": done.before, **done.cleared.as_dict()}
    return Answer(done.summary(), data)


@tool(
    "forget_memory",
    "Delete a memory for good when the user asks: its links and outcome events go too, a "
    "decision it replaced is current again, and its text leaves the index, vectors and "
    "backups.",
    _REWRITES,
)
def do_forget(env: Env, args: ForgetInput) -> Answer:
    """Forget a memory; the session start is rendered again without it."""
    done = forget(env.store, env.config, args.memory_id)
    env.session.brief_stale(env.project)  # also wakes the indexer: its chain is re-embedded
    return Answer(done.summary(), done.as_dict())


@tool(
    "promote_memory",
    "Make a decision, insight or context global when the user says it holds in every project "
    "(a preference, a habit): every project's search and session start read it. back=true "
    "returns a global memory to this project.",
    Hints(read_only=False, contexts=("editing",)),
)
def do_promote(env: Env, args: PromoteInput) -> Answer:
    """Make a memory global (every project inherits it), or return it to this project."""
    if args.back:
        moved = demote(env.store, args.memory_id, env.project)
    else:
        moved = promote(env.store, args.memory_id)
    env.session.brief_stale(env.project)
    return Answer(moved.summary(), moved.as_dict())
