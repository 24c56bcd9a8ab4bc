"""Which tools the server lists, per session: the core, seeded from the store, grown by need.

Claude Code reads a changed tool list only from the model request after the next one —
unless the tool call that changed it is answered after the client has listed the tools
again: then the very next request carries the new list (seen with 2.1.197; the transport
waits for that re-listing, ``RELIST_WAIT_S`` at most, and ``RELIST_SETTLE_S`` after it). A
turn's first request is built before its prompt's hooks run, so a tool that turn needs must
be listed before it starts. The list is therefore chosen from what the project's memory
makes possible when the session starts (``seed_contexts``): the core for an empty project;
the resume and search tools once it has memories; the link verdict tools while proposed
links wait for one. The rest — correcting, forgetting or promoting a memory, the graph, a
decision's confidence history — is listed when the session's work needs it: a prompt that
asks for it (for the turns after it), a save that may be proposed links, or ``more_tools``
(its answer arrives with them listed). A growth lists every tool at once: a changed list
throws away the client's prompt cache, so it changes at most once per session, only ever
growing, and each change is counted and logged. Clients that do not reliably refresh their
list (anything but the Claude Code CLI, in ``auto``) get every tool from the start, and no
``more_tools``; so does any session where notifying a change failed.

Standard library only: a light front lists tools with it before pydantic loads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .catalogue import CONTEXT_TOOLS, CORE, MORE_TOOLS, load

log = logging.getLogger("mama.server")
DYNAMIC_CLIENTS = frozenset({"claude-code"})
# How long a tool call that grew the list holds its answer for the client to list the tools
# again (Claude Code does within milliseconds), so that its next request carries them; and how
# long after that list is sent, for the client to take it in before the answer (without it,
# under load, the next request was sometimes built from the old list).
RELIST_WAIT_S = 1.0
RELIST_SETTLE_S = 0.1
# The contexts a session starts with when its project's memory makes them possible; the
# others are listed when the session's work needs them (see the module's docstring).
SEEDED = ("resuming", "searching", "deciding")
# A save in a project that has memories may be proposed links: its verdict tools follow it.
AFTER_A_SAVE = (*SEEDED, "linking")


def seed_contexts(store: Any, project: str, *, session_id: str = "") -> list[str]:
    """The contexts the project's memory makes possible now, from a few indexed look-ups
    (:func:`contexts_of`; ``proposal``: link proposals wait for a verdict).

    The rolling checkpoint of ``session_id`` (the session being served) is its own record,
    not earlier work: it counts for nothing. ``store`` is a storage ``Store`` (apsw only).
    """

    def has(kind: str) -> bool:
        # A session has one rolling checkpoint at most: two rows tell whether there is more.
        newest = store.memories.recent(project=project, type=kind, limit=2)
        return any(not (session_id and m.session_id == session_id and m.rolling) for m in newest)

    found = {kind for kind in MEMORY_KINDS if has(kind)}
    pending = store.suggestions.any_pending(project)
    return contexts_of(found | ({PROPOSAL} if pending else set()))


# The memory types whose presence seeds a session's list (contexts_of says how).
MEMORY_KINDS = ("decision", "checkpoint", "insight", "context")
PROPOSAL = "proposal"  # not a memory type: a proposed link waits for a verdict
# The project's memory could not be read: every context, every tool listed from the start
# (a damaged store must not take tools away).
UNREADABLE = ("unreadable", *CONTEXT_TOOLS)


def contexts_of(kinds: Iterable[str]) -> list[str]:
    """The contexts a project's memory makes possible, from the memory types it holds.

    Any memory: resuming, searching, deciding against earlier memories, linking (a save in
    such a project may be proposed links) and editing (correcting, forgetting or promoting
    any memory). Any decision: tracking too (its outcome, its replacement). Pending link
    proposals (``PROPOSAL`` among ``kinds``) make linking possible and add ``PROPOSAL`` as a
    mark (no tools of its own): the session start shows them, so :func:`seeded` lists their
    verdict tools from the first request.
    """
    found = set(kinds)
    possible = []
    if found & set(MEMORY_KINDS):
        possible = ["resuming", "searching", "deciding", "linking", "editing"]
    if "decision" in found:
        possible.append("tracking")
    if PROPOSAL in found:
        possible += [*(["linking"] if "linking" not in possible else []), PROPOSAL]
    return possible


def seeded(possible: Iterable[str]) -> list[str]:
    """Of the ``possible`` contexts, those a session's first list holds: ``SEEDED``, and
    linking while proposals wait for a verdict."""
    possible = list(possible)
    first = set(SEEDED) | ({"linking"} if PROPOSAL in possible else set())
    return [c for c in possible if c in first]


def needs(contexts: Iterable[str | None]) -> set[str]:
    """Every tool the given contexts need."""
    return {name for c in contexts if c for name in CONTEXT_TOOLS.get(c, ())}


@dataclass
class Exposure:
    """Tool-listing state of one server process (one stdio client)."""

    mode: str = "auto"
    legacy_listed: bool = False
    visible: set[str] = field(default_factory=lambda: set(CORE))
    changes: int = 0
    failed: bool = False
    pending: bool = False
    started: bool = False  # seeded from the store's state
    shown: bool = False  # a dynamic list has been handed to the client
    listings: int = 0  # lists the client was sent (the transports count): a growth waits for one
    told_at: int = 0  # ``listings`` when the client was last told its list changed
    # The link tool's word parameters as last listed (server/word_params.py); None: not yet.
    words: tuple[str, ...] | None = None

    def dynamic(self, client: str | None) -> bool:
        """Whether this client gets the seeded, growing list rather than every tool."""
        if self.failed or self.mode == "force_static":
            return False
        return self.mode == "force_dynamic" or (client or "") in DYNAMIC_CLIENTS

    def listed(self, client: str | None) -> list[str]:
        """Names to list now, in the table's order."""
        dynamic = self.dynamic(client)
        self.shown = self.shown or dynamic
        catalogue = load()
        if dynamic:
            names = [n for n in catalogue.listed if n in self.visible]
        else:  # every tool is listed: nothing to ask for
            names = [n for n in catalogue.listed if n != MORE_TOOLS]
        return names + list(catalogue.legacy) if self.legacy_listed else names

    def start(self, contexts: Iterable[str]) -> list[str]:
        """Seed the list with the tools of the :func:`seeded` ones of the possible
        ``contexts``, once; return what was added.

        Before the client has seen a list this is the session's first list, not a change;
        after, it is a growth like any other (counted, notified).
        """
        if self.started:
            return []
        self.started = True
        contexts = list(contexts)
        if UNREADABLE[0] in contexts:
            return self.grow_all(contexts) if self.shown else self._seed(load().listed, contexts)
        contexts = seeded(contexts)
        if self.shown:
            return self.grow(contexts)
        return self._seed(needs(contexts), contexts)

    def _seed(self, wanted: Iterable[str], contexts: list[str]) -> list[str]:
        wanted = set(wanted)
        added = [n for n in load().listed if n in wanted and n not in self.visible]
        self.visible.update(added)
        log.info("tool list seeded with %s for contexts %s", added, contexts)
        return added

    def grow(self, contexts: str | Iterable[str | None] | None) -> list[str]:
        """Make the tools of ``contexts`` listed; return what was added (nothing twice).

        A context whose tools are all listed changes nothing. Otherwise the list grows to
        every tool at once, so that no later context needs a second change.
        """
        named = [contexts] if contexts is None or isinstance(contexts, str) else list(contexts)
        if needs(named) <= self.visible:
            return []
        return self.grow_all(named)

    def grow_all(self, why: object) -> list[str]:
        """List every tool (``why``: what asked, for the log); return what was added."""
        every = load().listed
        added = [n for n in every if n not in self.visible]
        self.visible = set(every)
        if not added:
            return []
        if self.failed or self.mode == "force_static":
            return added  # the client already lists every tool: nothing changes for it
        self.changes += 1
        self.pending = True
        log.info("tool list grows to every tool for %s: +%s (change %d)", why, added, self.changes)
        return added

    def relisted(self, timeout_s: float = RELIST_WAIT_S) -> bool:
        """Wait until the client has been sent a list since it was last told of a change
        (``timeout_s`` at most); whether it was."""
        deadline = time.monotonic() + timeout_s
        while self.listings == self.told_at and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.listings == self.told_at:
            return False
        time.sleep(RELIST_SETTLE_S)
        return True

    def reword(self, words: Iterable[str]) -> bool:
        """Record the link tool's word parameters after a write; True when the schema a client
        was listed changed (``words`` is set by a listing that held the link tool), which is
        then notified like a growth — counted, logged, rare (a word is promoted once, past
        50 links)."""
        now = tuple(words)
        before = self.words
        if before is None or before == now:
            return False
        self.words = now
        self.changes += 1
        self.pending = True
        log.info("link tool parameters now %s (were %s; change %d)", now, before, self.changes)
        return True

    def fall_back(self, reason: str) -> None:
        """Stop depending on list-changed notifications: list every tool from now on."""
        if not self.failed:
            self.failed = True
            self.changes += 1
            log.warning("dynamic tools off for this session (%s): listing every tool", reason)
