"""Which tools the server lists, per session: the core, seeded from the store, grown once.

Claude Code reads a changed tool list only from the model request after the next one, so a
tool a turn needs must be listed before the turn starts. The list is therefore chosen from
what the project's memory makes possible when the session starts (``seed_contexts``): the
core for an empty project; the search, resume, link and editing tools once it has memories; the
tracking tools once it has decisions. When a later prompt or write needs a tool that is not
listed, the list grows — once — to every tool: a changed list throws away the client's
prompt cache, so it changes at most once per session, only ever growing, and each change is
counted and logged. Clients that do not reliably refresh their list (anything but the Claude
Code CLI, in ``auto``) get every tool from the start, as does any session where notifying a
change failed.

Standard library only: a light front lists tools with it before pydantic loads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .catalogue import CONTEXT_TOOLS, CORE, load

log = logging.getLogger("mama.server")
DYNAMIC_CLIENTS = frozenset({"claude-code"})


def seed_contexts(store: Any, project: str, *, session_id: str = "") -> list[str]:
    """The contexts the project's memory makes possible now, from a few indexed look-ups.

    Any memory: resuming, searching, deciding against earlier memories, linking (a save in
    such a project may be proposed links, and pending proposals are shown at session start)
    and editing (correcting, forgetting or promoting any memory). Any decision: tracking
    too (its outcome, its replacement — a decision with an outcome can still be
    superseded). The rolling checkpoint of ``session_id`` (the session being served) is its
    own record, not earlier work: it counts for nothing. ``store`` is a storage ``Store``
    (apsw only).
    """

    def has(kind: str) -> bool:
        # A session has one rolling checkpoint at most: two rows tell whether there is more.
        newest = store.memories.recent(project=project, type=kind, limit=2)
        return any(not (session_id and m.session_id == session_id and m.rolling) for m in newest)

    found = {kind for kind in MEMORY_KINDS if has(kind)}
    return contexts_of(found)


# The memory types whose presence seeds a session's list (contexts_of says how).
MEMORY_KINDS = ("decision", "checkpoint", "insight", "context")


def contexts_of(kinds: Iterable[str]) -> list[str]:
    """The contexts a project's memory makes possible, from the memory types it holds."""
    found = set(kinds)
    if "decision" in found:
        return ["resuming", "searching", "deciding", "linking", "editing", "tracking"]
    if found & {"checkpoint", "insight", "context"}:
        return ["resuming", "searching", "deciding", "linking", "editing"]
    return []


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
        names = [n for n in catalogue.listed if not dynamic or n in self.visible]
        return names + list(catalogue.legacy) if self.legacy_listed else names

    def start(self, contexts: Iterable[str]) -> list[str]:
        """Seed the list with the tools of ``contexts``, once; return what was added.

        Before the client has seen a list this is the session's first list, not a change;
        after, it is a growth like any other (counted, notified).
        """
        if self.started:
            return []
        self.started = True
        contexts = list(contexts)
        if self.shown:
            return self.grow(contexts)
        wanted = needs(contexts)
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
        every = load().listed
        added = [n for n in every if n not in self.visible]
        self.visible = set(every)
        if self.failed or self.mode == "force_static":
            return added  # the client already lists every tool: nothing changes for it
        self.changes += 1
        self.pending = True
        log.info(
            "tool list grows to every tool for %s: +%s (change %d)", named, added, self.changes
        )
        return added

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
