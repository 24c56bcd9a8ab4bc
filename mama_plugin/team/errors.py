"""The team store's errors: the database cannot be reached, refuses, or is not set up."""

from __future__ import annotations

from ..errors import MamaError


class TeamError(MamaError):
    """Raised when a team command cannot do what was asked; the message says what to fix."""


class TeamUnreachable(TeamError):
    """Raised when the team database cannot be reached now; local memory keeps working."""


class TeamAccessError(TeamError):
    """Raised when the team database refuses this developer's role for a project."""


class TeamNotSetUp(TeamError):
    """Raised when the team database lacks MAMA's schema, or has an older one."""
