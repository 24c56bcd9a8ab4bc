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
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_CAUSE = re.compile(r"\bbecause\b", re.I)


def because(reason: object) -> str:
    """``reason`` introduced by "because", unless it already says "because" itself ("Sentinel
    is configured because one node fails every login" would read "because … because")."""
    text = str(reason or "")
    return text if _CAUSE.search(text) else f"because {text}"


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
