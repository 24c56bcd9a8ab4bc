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
