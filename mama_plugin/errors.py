"""The package's exceptions: one base, one subclass per way things go wrong."""

from __future__ import annotations


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


class SchemaError(MamaError):
    """Raised when the database schema is newer than this code or cannot be migrated."""


class StoreBusyError(MamaError):
    """Raised when the database stayed locked by other writers past the retry deadline."""


class ConfigError(MamaError):
    """Raised when a config key or value is unknown or malformed."""


class LegacyImportError(MamaError):
    """Raised when an import cannot read its source or its rows did not all arrive."""


class BootstrapError(MamaError):
    """Raised when the plugin's Python environment cannot be built; the bootstrap log says why."""


class StoreDamaged(MamaError):
    """Raised when the database file is damaged; MAMA then writes nothing into it."""

    def __init__(self, path: str, problems: list[str], backup: tuple[str, str] | None) -> None:
        self.path = path
        self.problems = list(problems) or ["database disk image is malformed"]
        self.backup = backup  # (file, when it was taken) of the newest backup, if any
        more = len(self.problems) - 1
        what = self.problems[0] + (f"; {more} more problem(s)" if more else "")
        if backup:
            fix = (
                f"run `mama doctor` to check it, then `mama doctor --restore` to put back the "
                f"newest backup ({backup[0]}, taken {backup[1]}); the damaged file is kept aside"
            )
        else:
            fix = (
                "run `mama doctor` to check it (there is no backup to restore: it says what to do)"
            )
        super().__init__(
            f"the memory store {path} is damaged ({what}). MAMA writes nothing into it until "
            f"it is repaired: {fix}"
        )

    @property
    def notice(self) -> str:
        """One short line for the model at session start: what is wrong and what to say."""
        return (
            f"MAMA's memory store ({self.path}) is damaged: nothing can be saved or recalled "
            "until it is repaired. Tell the user to run `mama doctor` in a terminal."
        )
