"""Personal command aliases: ``/mama-resume`` typed verbatim runs the plugin's ``/mama:resume``.

Claude Code namespaces plugin commands (``/mama:resume``); a bare ``/mama-resume`` only works
as a personal command in ``~/.claude/commands``. Each alias delegates to the plugin command
through the Skill tool. MAMA writes the aliases at session start (unless ``command_aliases``
is off) and removes them with ``mama commands remove``; it only ever touches files that carry
its marker line, so a user's own ``mama-*.md`` is never overwritten or deleted.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Config

MARKER = "<!-- mama-alias: written by the MAMA plugin; `mama commands remove` deletes it -->"
SERVER = "mcp__plugin_mama_mama__"
ALIASES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    # alias: (plugin command, description, argument hint, MCP tools it may call)
    "mama-resume": (
        "resume",
        "Resume where the last session stopped (MAMA checkpoint)",
        "[checkpoint id]",
        ("load_checkpoint", "load_context", "search_by_context"),
    ),
    "mama-save": (
        "save",
        "Save the current decision or checkpoint with its full story (MAMA)",
        "[what to save]",
        (
            "save_decision",
            "save_checkpoint",
            "evolve_supersede",
            "search_by_context",
            "search_by_topic",
            "suggest_links",
            "evolve_link",
        ),
    ),
    "mama-configure": (
        "configure",
        "Show or change MAMA's settings; what gc would remove, what is flagged as changed",
        "[key value]",
        (),
    ),
}


# What /mama:configure runs of MAMA's command line (its allowed-tools, the alias's too).
CONFIGURE_RUNS = ("config", "gc --dry-run", "verify --list")


def commands_dir() -> Path:
    """The user's personal command folder (``$CLAUDE_CONFIG_DIR/commands`` when set)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "commands"


def plugin_root() -> str:
    """The plugin's folder as Claude Code spells it (``$CLAUDE_PLUGIN_ROOT``, verbatim)."""
    return os.environ.get("CLAUDE_PLUGIN_ROOT") or str(Path(__file__).resolve().parents[2])


def alias_text(alias: str) -> str:
    """The Markdown of one alias command.

    A skill's own ``allowed-tools`` do not cover the calls the model makes after loading it,
    so each alias lists them: the MCP tools, and for configure MAMA's command line (whose
    path changes with every plugin update: the alias is rewritten when it does).
    """
    command, description, hint, tools = ALIASES[alias]
    rules = [f"Skill(mama:{command})", *(SERVER + t for t in tools)]
    if command == "configure":
        mama = f'sh "{plugin_root()}/bin/mama"'
        rules += [f"Bash({mama} {run}:*)" for run in CONFIGURE_RUNS]
    allowed = ", ".join(rules)
    return (
        f"---\ndescription: {description} — alias of /mama:{command}\n"
        f"argument-hint: {hint}\nallowed-tools: {allowed}\n---\n{MARKER}\n"
        f'Use the Skill tool to run the skill "mama:{command}" with the arguments: $ARGUMENTS\n'
        f"Then follow its instructions. If no such skill exists, the MAMA plugin is not "
        f"installed any more: tell the user, and that deleting "
        f"{commands_dir() / (alias + '.md')} removes this command.\n"
    )


def is_managed(path: Path) -> bool:
    """True for an alias file MAMA wrote (it carries the marker line)."""
    try:
        return MARKER in path.read_text(encoding="utf-8")
    except OSError:
        return False


def install_aliases() -> list[Path]:
    """Write every alias that is missing or outdated; return the files written."""
    folder = commands_dir()
    written = []
    for alias in ALIASES:
        path = folder / f"{alias}.md"
        text = alias_text(alias)
        if path.exists() and (not is_managed(path) or path.read_text(encoding="utf-8") == text):
            continue  # the user's own command, or already current
        import tempfile  # here: every session start runs this, and nearly always writes nothing

        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{alias}.", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
        written.append(path)
    return written


def remove_aliases() -> list[Path]:
    """Delete the aliases MAMA wrote (never a file without its marker); return them."""
    removed = []
    for alias in ALIASES:
        path = commands_dir() / f"{alias}.md"
        if is_managed(path):
            path.unlink()
            removed.append(path)
    return removed


def ensure_aliases(config: Config) -> None:
    """Make the aliases match the ``command_aliases`` setting (cheap when nothing changes)."""
    if config.settings.command_aliases:
        install_aliases()
    else:
        remove_aliases()
