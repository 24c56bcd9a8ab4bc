"""User configuration: ``MAMA_HOME``, the config file and its typed keys.

Standard library only (hooks read config on a cold start). The file is
``$MAMA_HOME/config.json``; a missing file means every key has its default. Writes are atomic
(temporary file + rename), so a crash never leaves half a config behind.
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .home import private_folder, write_private
from .settings import KEYS, Key, Settings

CONFIG_FILE = "config.json"
# Environment variables a process honours beside config.json (setting -> variable), read once
# when the process's Config is built at its composition root, never below it.
OVERRIDES = {"dynamic_tools": "MAMA_DYNAMIC_TOOLS", "turn_wait_s": "MAMA_TURN_WAIT_S"}


def mama_home() -> Path:
    """Return the per-user MAMA directory (``$MAMA_HOME``, default ``~/.mama``)."""
    env = os.environ.get("MAMA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".mama"


class Config:
    """Typed view of ``config.json``; unknown keys in the file are kept but ignored."""

    def __init__(self, home: Path | None = None, *, strict: bool = True) -> None:
        """Read the config file; ``strict=False`` turns every problem into a default.

        Long-running parts (the server, hooks) run lenient and report ``problems`` in their
        log: a typo in config.json must not take memory away from a session.
        """
        self.home = home or mama_home()
        self.path = self.home / CONFIG_FILE
        self.strict = strict
        self.problems: list[str] = []
        # What the environment overrides (OVERRIDES), as given: each reader says what it ignores.
        self.overrides = {
            key: value.strip()
            for key, name in OVERRIDES.items()
            if (value := os.environ.get(name, "")).strip()
        }
        self._stamp = _stamp(self.path)
        try:
            self._data = self._read()
        except ConfigError as exc:
            if strict:
                raise
            self.problems.append(str(exc))
            self._data = {}

    def _read(self) -> dict[str, Any]:
        """The file's object of key: value ({} without a file); ConfigError says what to fix."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(
                f"cannot read {self.path} ({exc.strerror or exc}); fix its permissions or "
                "delete it to return to the defaults"
            ) from exc
        try:
            text = raw.decode("utf-8-sig")  # a byte-order mark is not worth refusing
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{self.path} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                f"{exc.start}); fix it or delete it to return to the defaults"
            ) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{self.path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                "fix it or delete it to return to the defaults"
            ) from exc
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, deep nesting
            raise ConfigError(
                f"{self.path} cannot be read as JSON ({exc}); fix it or delete it to return "
                "to the defaults"
            ) from exc
        if not isinstance(data, dict):
            raise ConfigError(
                f"{self.path} must hold a JSON object of key: value, not {_json_kind(data)}; "
                "fix it or delete it to return to the defaults"
            )
        return data

    @property
    def notice(self) -> str:
        """One short line for the model when part of the file was set aside ("" when none).

        Lenient readers log each problem and surface this one (at session start).
        """
        if not self.problems:
            return ""
        more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return (
            f"MAMA's settings could not all be used: {self.problems[0]}{more}. MAMA runs on "
            "its defaults for those; tell the user to fix the file (`mama config list` shows "
            "what is in effect)."
        )

    def refreshed(self) -> Config:
        """This config, or a lenient re-read of the file if it changed since it was read.

        A long-running process (the MCP server) calls this per request, so a change made
        mid-session (``/mama-configure``) applies from the next prompt. One ``stat`` a call.
        """
        if _stamp(self.path) == self._stamp:
            return self
        return Config(self.home, strict=False)

    @cached_property
    def settings(self) -> Settings:
        """Every key's effective value, typed (strict: raises ConfigError for a bad value).

        Code reads settings through this; :meth:`get` is for a key named at run time
        (``mama config get KEY``).
        """
        return Settings(**{name: self.get(name) for name in KEYS})

    def get(self, name: str) -> Any:
        """Return the value of ``name``: the file's value when valid, else the default."""
        key = _key(name)
        if name not in self._data:
            return key.default
        raw = self._data[name]
        try:
            _check_kind(key, raw)
            return key.parse(raw if isinstance(raw, list) else str(raw))
        except (TypeError, ValueError) as exc:
            problem = f"config {name}={_shown(raw)} in {self.path}: {exc}"
            if self.strict:
                raise ConfigError(problem) from exc
            self.problems.append(f"{problem}; using the default {key.default!r}")
            return key.default

    def set(self, name: str, text: str) -> Any:
        """Validate ``text`` for ``name``, write it atomically and return the parsed value."""
        key = _key(name)
        try:
            value = key.parse(text)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{name}: {text!r} is not valid: {exc}") from exc
        self._data[name] = list(value) if isinstance(value, tuple) else value
        self._write()
        self.__dict__.pop("settings", None)
        return value

    def unset(self, name: str) -> None:
        """Return ``name`` to its default (drop it from the file)."""
        _key(name)
        if self._data.pop(name, None) is not None:
            self._write()
            self.__dict__.pop("settings", None)

    def _write(self) -> None:
        text = json.dumps(self._data, indent=2, sort_keys=True) + "\n"
        try:
            private_folder(self.home)
            write_private(self.path, text)
        except OSError as exc:
            raise ConfigError(
                f"cannot write {self.path} ({exc.strerror or exc}): nothing was changed. "
                f"Make {self.home} writable, or point MAMA_HOME at a folder that is"
            ) from exc

    def as_dict(self) -> dict[str, Any]:
        """Return every known key with its effective value."""
        return {name: self.get(name) for name in KEYS}

    def project_enabled(self, project: str) -> bool:
        """False when the user switched MAMA's hooks off for ``project``."""
        return project not in self.settings.disabled_projects

    @property
    def db_path(self) -> Path:
        """The database file: the ``db_path`` key, else ``$MAMA_HOME/mama.db``."""
        configured = self.settings.db_path
        return Path(configured) if configured else self.home / "mama.db"


def _stamp(path: Path) -> tuple[int, int] | None:
    """When and how big the file last was (None: no file)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def _key(name: str) -> Key:
    try:
        return KEYS[name]
    except KeyError:
        known = ", ".join(sorted(KEYS))
        raise ConfigError(f"unknown config key {name!r}; known keys: {known}") from None


def _check_kind(key: Key, raw: Any) -> None:
    """Refuse a JSON value of the wrong kind (``null``, an object…) before it is parsed.

    ``str(None)`` would otherwise make ``db_path`` the relative path ``None``.
    """
    default = key.default
    if isinstance(default, bool):
        ok, want = isinstance(raw, bool | str | int), "true or false"
    elif isinstance(default, int | float):
        ok, want = isinstance(raw, int | float | str) and not isinstance(raw, bool), "a number"
    elif isinstance(default, tuple):
        ok, want = isinstance(raw, list | str), "a list of paths"
    else:
        ok, want = isinstance(raw, str), "a string"
    if not ok:
        raise ValueError(f"must be {want}, not {_json_kind(raw)}")


def _json_kind(value: Any) -> str:
    """What a JSON value is, as its author wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _shown(raw: Any) -> str:
    """``raw`` for a message: at most 80 characters of it."""
    text = repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."
