"""Render memories as text with Jinja templates a user can override.

Templates are looked up first in ``$MAMA_HOME/templates`` (the user's overrides), then in the
templates shipped with MAMA (the repository's top-level ``templates/``, packaged into the wheel
as ``mama_plugin/templates``).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from functools import cache
from pathlib import Path
from typing import Any

from ..home import private_folder, shipped_templates
from ..text import strip_cue


def when(ms: int | None) -> str:
    """A millisecond timestamp as ``YYYY-MM-DD HH:MM UTC`` (empty for None)."""
    if not ms:
        return ""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))


def day(ms: int | None) -> str:
    """A millisecond timestamp as ``YYYY-MM-DD`` (empty for None)."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000)) if ms else ""


def clip(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis, at the end of a word
    when one ends in the last third (a text without spaces, such as Korean written solid or a
    long path, is cut where the limit falls)."""
    flat = " ".join(str(text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space >= (limit - 1) * 2 // 3 and not flat[limit - 1].isspace():
        cut = cut[:space]
    return cut.rstrip(" ,;:—-") + "…"


_CAUSE = re.compile(r"\bbecause\b", re.I)
# Words that start a sentence and are never a name: after "because" they are lowercase
# ("because The p99 …" reads "because the p99 …"); any other capital (Redis, JWT) stays.
_PLAIN_WORDS = (
    "a an the it its this that these those they their there we our us you your he she his her "
    "i my every each all any some no none nothing both one two several many most few more less "
    "only not neither either without with when while since after before once if otherwise so "
    "as in on at by for from of to under over stale old new users clients requests"
)
_PLAIN = frozenset(_PLAIN_WORDS.split())


def because(reason: object) -> str:
    """``reason`` introduced by "because", unless it already says "because" itself ("Sentinel
    is configured because one node fails every login" would read "because … because"). A
    first word that is never a name loses its capital ("because the p99 …")."""
    text = str(reason or "")
    if _CAUSE.search(text):
        return text
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and first.lower().strip(",") in _PLAIN:
        text = text[0].lower() + text[1:]
    return f"because {text}"


def confidence(value: object) -> str:
    """A confidence as told: two decimals when it has them (0.75), else one (0.8, 1.0)."""
    try:
        told = f"{float(value):.2f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "?"
    return told[:-1] if told.endswith("0") else told


def ago_marker(ms: int | None) -> str:
    """A marker for "how long ago", filled in when the text is shown (briefing.finish)."""
    return f"{{ago:{int(ms)}}}" if ms else ""


@cache
def _environment(user_dir: str, _overrides: tuple[str, ...]) -> Any:
    """One Jinja environment per set of user override files.

    Jinja caches a template by name once found, so an override added while a process runs
    (the long-lived MCP server) would never be looked up: a new set of files, a new cache.
    """
    import jinja2  # ~40 ms: paid on the first render, not by every importer of this module

    class CompiledTemplates(jinja2.FileSystemBytecodeCache):
        """Templates compiled once, kept in ``$MAMA_HOME/cache/templates`` (~10 ms each a
        short-lived process no longer pays); a folder that cannot be written only costs that."""

        def load_bytecode(self, bucket: Any) -> None:
            with contextlib.suppress(OSError):
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket: Any) -> None:
            with contextlib.suppress(OSError):
                private_folder(Path(self.directory))
                super().dump_bytecode(bucket)

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [jinja2.FileSystemLoader(user_dir), jinja2.FileSystemLoader(str(shipped_templates()))]
        ),
        # Plain text and Markdown for a terminal or a model, never HTML. Missing layer keys
        # (older or imported rows) render as empty rather than failing.
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Keyed by each template's name and source: an edited override is compiled afresh.
        bytecode_cache=CompiledTemplates(str(Path(user_dir).parent / "cache" / "templates")),
    )
    env.filters["when"] = when
    env.filters["day"] = day
    env.filters["clip"] = clip
    env.filters["because"] = because
    env.filters["confidence"] = confidence
    env.filters["ago"] = ago_marker
    env.filters["step"] = strip_cue  # a next step without its "Next:" cue
    return env


def render(name: str, home: Path, /, **context: Any) -> str:
    """Render template ``name`` with ``context``: the user's override in ``home``'s
    ``templates`` folder (``home`` is the ``Config.home`` the process's root built), else the
    shipped one."""
    user_dir = home / "templates"
    try:
        overrides = tuple(sorted(os.listdir(user_dir)))
    except OSError:
        overrides = ()
    return _environment(str(user_dir), overrides).get_template(name).render(**context)
