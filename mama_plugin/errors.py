"""The package's exceptions: one base, one subclass per way things go wrong."""

from __future__ import annotations

import os

from .bootstrap.launcher import mama_command


class MamaError(Exception):
    """Raised for every failure MAMA reports to a person; the message says what to fix."""


class ValidationError(MamaError):
    """Raised when input does not describe a valid memory or link; nothing was written."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class NotFoundError(MamaError):
    """Raised when an id names no memory (or no link) in the store."""


class ConflictError(MamaError):
    """Raised when a memory changed under an update that expected an older row version."""


class EditConflict(ConflictError):
    """Raised when an edit was based on an older version of a memory; nothing was written.

    Carries both versions of the fields the edit gives: ``stored`` (as they are now, at
    ``stored_version``) and ``proposed``.
    """

    def __init__(
        self,
        memory_id: str,
        expected: int,
        stored_version: int,
        stored: dict[str, object],
        proposed: dict[str, object],
    ) -> None:
        self.memory_id, self.expected, self.stored_version = memory_id, expected, stored_version
        self.stored, self.proposed = stored, proposed

        def told(fields: dict[str, object]) -> str:
            return "; ".join(f"{k}: {v!r}" for k, v in fields.items())

        super().__init__(
            f"memory {memory_id} changed since you read it (you had version {expected}, it is "
            f"now version {stored_version}): nothing was changed. Stored (version "
            f"{stored_version}) — {told(stored)}. Yours — {told(proposed)}. Merge the two and "
            f"update again with expected_version={stored_version}"
        )


class SchemaError(MamaError):
    """Raised when the database schema is newer than this code or cannot be migrated."""


class StoreUnwritable(MamaError):
    """Raised when the store cannot take a write now; what it holds can still be read."""


class StoreBusyError(StoreUnwritable):
    """Raised when the database stayed locked by other writers past the retry deadline."""


class StoreReadOnly(StoreUnwritable):
    """Raised when the database (or the folder it needs) is read-only: MAMA works read-only."""

    def __init__(self, path: str, reason: str, *, creating: bool = False) -> None:
        self.path, self.reason = path, reason
        folder = os.path.dirname(path) or "."
        what = (
            f"MAMA cannot create its memory store {path} ({reason}), so"
            if creating
            else f"MAMA's memory store {path} is read-only ({reason}): searching and recall "
            "still work, but"
        )
        super().__init__(
            f"{what} nothing can be saved. To save again, make {folder} writable "
            f"(`chmod u+w {folder}`, or remount it read-write), or point MAMA at a writable "
            "place (`mama config set db_path PATH`, or MAMA_HOME)"
        )

    @property
    def notice(self) -> str:
        """One short line for the model at session start: what is wrong and what to say."""
        return (
            f"MAMA's memory store ({self.path}) is read-only: memories can be recalled but not "
            "saved. Tell the user to make its folder writable to save again."
        )


class StoreFull(StoreUnwritable):
    """Raised when the disk holding the database is full; the write was rolled back."""

    def __init__(self, path: str) -> None:
        self.path = path
        folder = os.path.dirname(path) or "."
        super().__init__(
            f"the disk holding MAMA's memory store {path} is full: nothing was saved (what was "
            f"saved before is intact). Free some space there (`df -h {folder}` shows it), "
            "then save again"
        )


class ConfigError(MamaError):
    """Raised when a config key or value is unknown or malformed."""


class LegacyImportError(MamaError):
    """Raised when an import cannot read its source or its rows did not all arrive."""


class BootstrapError(MamaError):
    """Raised when the plugin's Python environment cannot be built; the bootstrap log says why."""


class StoreDamaged(MamaError):
    """Raised when the database file is damaged; MAMA then writes nothing into it."""

    def __init__(
        self,
        path: str,
        problems: list[str],
        backup: tuple[str, str] | None,
        *,
        derived: tuple[str, ...] = (),
        readable: bool = False,
    ) -> None:
        self.path = path
        self.problems = list(problems) or ["database disk image is malformed"]
        self.backup = backup  # (file, when it was taken) of the newest backup, if any
        # The parts the memories rebuild that are damaged, when nothing else is (else empty).
        self.derived = tuple(derived)
        # Damaged only where reads can do without (the vectors, the full-text index): every
        # memory still reads, and searches answer without the damaged part.
        self.readable = readable and bool(self.derived)
        more = len(self.problems) - 1
        what = self.problems[0] + (f"; {more} more problem(s)" if more else "")
        mama = mama_command()
        if self.derived:
            where = (
                f" in {_listed(self.derived)} only, which MAMA rebuilds from the memories; every "
                "memory and link reads sound"
            )
            if self.readable:
                where += (
                    f", and MAMA reads them as usual, searching without {_listed(self.derived)}"
                )
            fix = (
                f"run `{mama} doctor --repair` to rebuild what is damaged from the memories "
                "(every memory and link is kept; the damaged file is kept aside)"
            )
        elif backup:
            where = ""
            fix = (
                f"run `{mama} doctor` to check it, then `{mama} doctor --restore` to put back "
                f"the newest backup ({backup[0]}, taken {backup[1]}); the damaged file is kept "
                "aside"
            )
        else:
            where = ""
            fix = (
                f"run `{mama} doctor` to check it (there is no backup to restore: it says what "
                "to do)"
            )
        super().__init__(
            f"the memory store {path} is damaged ({what}){where}. MAMA writes nothing into it "
            f"until it is repaired: {fix}"
        )

    @property
    def notice(self) -> str:
        """One short line for the model at session start: what is wrong and what to say."""
        mama = mama_command()
        if self.readable:
            return (
                f"MAMA's memory store ({self.path}) is damaged in {_listed(self.derived)} only: "
                f"the memories are intact and read as usual (searched without "
                f"{_listed(self.derived)}), but nothing can be saved until it is rebuilt. Tell "
                f"the user to run `{mama} doctor --repair` in a terminal: it rebuilds that from "
                "the memories and keeps every memory and link."
            )
        if self.derived:
            return (
                f"MAMA's memory store ({self.path}) is damaged in {_listed(self.derived)} only: "
                "the memories are intact, but nothing can be saved or recalled until it is "
                f"rebuilt. Tell the user to run `{mama} doctor --repair` in a terminal: it "
                "rebuilds that from the memories and keeps every memory and link."
            )
        return (
            f"MAMA's memory store ({self.path}) is damaged: nothing can be saved or recalled "
            f"until it is repaired. Tell the user to run `{mama} doctor` in a terminal."
        )


def _listed(parts: tuple[str, ...]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


class TeamError(MamaError):
    """Raised when a team command cannot do what was asked; the message says what to fix."""


class TeamUnreachable(TeamError):
    """Raised when the team database cannot be reached now; local memory keeps working."""


class TeamAccessError(TeamError):
    """Raised when the team database refuses this developer's role for a project."""


class TeamNotSetUp(TeamError):
    """Raised when the team database lacks MAMA's schema, or has an older one."""
