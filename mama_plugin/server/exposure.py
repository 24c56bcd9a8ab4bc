"""Which tools the server lists, per session: a core set, grown by the conversation's context.

A changed tool list throws away the client's prompt cache, so within a session the list only
grows, and each change is counted and logged. Clients that do not reliably refresh their list
(anything but the Claude Code CLI, in ``auto``) get every tool from the start, as does any
session where notifying a change failed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .catalogue import CONTEXT_TOOLS, CORE, load

log = logging.getLogger("mama.server")
DYNAMIC_CLIENTS = frozenset({"claude-code"})


@dataclass
class Exposure:
    """Tool-listing state of one server process (one stdio client)."""

    mode: str = "auto"
    legacy_listed: bool = False
    visible: set[str] = field(default_factory=lambda: set(CORE))
    changes: int = 0
    failed: bool = False
    pending: bool = False

    def dynamic(self, client: str | None) -> bool:
        """Whether this client gets the context-grown list rather than every tool."""
        if self.failed or self.mode == "force_static":
            return False
        return self.mode == "force_dynamic" or (client or "") in DYNAMIC_CLIENTS

    def listed(self, client: str | None) -> list[str]:
        """Names to list now, in the table's order."""
        dynamic = self.dynamic(client)
        catalogue = load()
        names = [n for n in catalogue.listed if not dynamic or n in self.visible]
        return names + list(catalogue.legacy) if self.legacy_listed else names

    def grow(self, context: str | None) -> list[str]:
        """Add the tools of ``context``; return what was added (nothing twice)."""
        added = [n for n in CONTEXT_TOOLS.get(context or "", ()) if n not in self.visible]
        if added:
            self.visible.update(added)
            self.changes += 1
            self.pending = True
            log.info("tool list grows for context %s: %s (change %d)", context, added, self.changes)
        return added

    def fall_back(self, reason: str) -> None:
        """Stop depending on list-changed notifications: list every tool from now on."""
        if not self.failed:
            self.failed = True
            self.changes += 1
            log.warning("dynamic tools off for this session (%s): listing every tool", reason)
