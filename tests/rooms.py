"""The house's rooms: the import contract's tables, and the Rooms section they render.

``tests/test_layers.py`` holds the code to these tables (every module in one room, each room
importing only its doors, the wings in their order, no cycle). docs/architecture.md's
"Rooms" section is rendered from them and from each module's docstring, its first paragraph:
``python tests/rooms.py`` rewrites it, ``--check`` says whether it is current (a test runs
that). To move a module or open a door, change the tables, then run it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = "mama_plugin"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# room -> the modules (and packages, with everything under them) it holds, relative to
# mama_plugin; "" is the package's own __init__, which re-exports lazily through importlib.
ROOMS: dict[str, tuple[str, ...]] = {
    "leaves": (
        "",
        "errors",
        "config",
        "settings",
        "project",
        "filestate",
        "privacy",
        "personal",
        "secret_rules",
        "relationships",
        "blas",
        "lazy",
        "intake",
        "plain",
        "groups",
        "text",
        "envelope",
        "fence",
        "jsonrpc",
        "home",
        "logs",
        "transcript",
        "bootstrap",
        # The embedding models' cards: data the settings read (standard library only).
        "embeddings.cards",
    ),
    "schema": ("schema",),
    "storage": ("storage",),
    # The embedding models: their cards, the protocol the services ask of one, their builds
    # and the runtime. Above the leaves alone, so every room below the surfaces may read a card.
    "embeddings": ("embeddings",),
    "transfer": ("transfer",),
    # Decisions shared through the repository's .mama/ folder: beside transfer; its scan.py
    # (standard library) is what the SessionStart hook reads a pull with.
    "share": ("share",),
    # The services, in wings (see WINGS): "services" is their root, what every wing shares.
    "services": ("services",),
    "learning": ("services.learning",),
    "graph": ("services.graph",),
    "search": ("services.search",),
    "recall": ("services.recall",),
    "saving": ("services.saving",),
    # The story the next session reads (services/story/): it may use search and save, never
    # the reverse.
    "story": ("services.story",),
    "hygiene": ("services.hygiene",),
    # The co-author: the generative model's runtime, its drafts, link suggestions and lines.
    "co-author": ("assist",),
    "surfaces": ("cli", "demo", "view"),
    # The MCP server and the hook runner are surfaces that reach no other surface; the hook
    # runner is held to less still: no schema, no model.
    "server": ("server",),
    "hooks": ("hooks",),
    # The team database's side of the team store (PostgreSQL); its SQLite side is storage's.
    "team": ("team",),
}
# The services' wings from the bottom up: each may import the root and the wings below it,
# never one above (a strict order, so no two wings hold each other).
WINGS = ("services", "learning", "graph", "search", "recall", "saving", "story", "hygiene")
MOST_WING_MODULES = 20  # modules in one wing
MOST_ROOT_MODULES = 10  # modules left flat in the services' root
# Modules whose work belongs to another room: they must be gone (module -> where it went).
RETIRED: dict[str, str] = {
    "mama_plugin.storage.legacy": "transfer/ (the v1.0 import)",
    "mama_plugin.storage.imports": "transfer/ (import_file, rollback)",
    "mama_plugin.storage.dump": "transfer/ (JSON dump and restore)",
    "mama_plugin.sentences": "text (the one tokenizer, stopwords, stemmer, sentence cues)",
    "mama_plugin.bench": "benchmarks/, outside the package (python -m benchmarks)",
    "mama_plugin.cli.bench": "benchmarks/cli.py and kinds.py (python -m benchmarks)",
    "mama_plugin.assist.model_file": "assist/models.py (with the profiles)",
    "mama_plugin.assist.profiles": "assist/models.py (with the model file)",
}
# Outside the package: what ``mama_plugin`` never imports (checked by top-level name), and the
# rows docs/architecture.md's Rooms table gives them (row -> folder at the checkout's root).
OUTSIDE: dict[str, str] = {"benchmarks": "benchmarks"}
NEVER_IMPORTED = frozenset({"benchmarks", "tests"})
BASE = ("leaves", "schema", "storage", "embeddings")
BELOW_SURFACES = (*BASE, "transfer", "share", *WINGS, "co-author", "team")

# room -> the rooms it may import besides its own.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "leaves": (),
    "schema": ("leaves",),
    "storage": ("leaves",),
    "embeddings": ("leaves",),
    "transfer": (*BASE, *WINGS[: WINGS.index("saving") + 1]),
    "share": ("storage", "leaves", *WINGS[: WINGS.index("hygiene") + 1]),
    **{wing: (*BASE, *WINGS[:n]) for n, wing in enumerate(WINGS)},
    "co-author": (*BASE, *WINGS),
    "surfaces": (*BELOW_SURFACES, "server", "hooks"),
    "server": BELOW_SURFACES,
    "hooks": ("leaves", "storage", *WINGS, "share"),
    "team": ("storage", "leaves"),
}

# room -> third-party packages it may import (None: any). Leaves run in the system Python
# (bootstrap) or on a cold hook, so they are standard library only.
THIRD_PARTY: dict[str, frozenset[str] | None] = {
    "leaves": frozenset(),
    "schema": frozenset({"pydantic", "pydantic_core"}),
    "storage": frozenset({"apsw"}),
    "embeddings": None,
    "transfer": None,
    # PyYAML reads a teammate's file (imported when one is read: the session start's scan
    # only hashes files, never parses them).
    "share": frozenset({"yaml"}),
    **dict.fromkeys(WINGS, None),
    "co-author": None,
    "surfaces": None,
    "server": None,
    "hooks": frozenset({"apsw"}),
    "team": None,
}
# room -> standard-library modules it must not import: the local models are libraries the CLI
# calls, so they parse no command line.
FORBIDDEN_STDLIB: dict[str, frozenset[str]] = {
    "embeddings": frozenset({"argparse"}),
    "co-author": frozenset({"argparse"}),
}

# What each room is for, and why its modules are one room (the Rooms section's first table). A
# room that is one package says it in its package's docstring instead.
NOTES: dict[str, str] = {
    "leaves": "Standard library only: what every room reads, the cold hook and the bootstrap "
    "(which runs under the system Python) included.",
    "surfaces": "What a person runs: the `mama` command, the demo and the page. Each parses, "
    "calls one service and prints.",
    "benchmarks": "Beside the package, never shipped (`python -m benchmarks KIND`): they may "
    "import every room by name; no module of `mama_plugin` imports them.",
}
MARK = "<!-- rooms: rendered by `python tests/rooms.py` from tests/rooms.py and each module's docstring -->"
END = "<!-- /rooms -->"
DOC = ROOT.parent / "docs" / "architecture.md"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def room_of(module: str) -> str | None:
    """The room holding ``module``: the longest matching entry of ``ROOMS``."""
    relative = module.removeprefix(PACKAGE).removeprefix(".")
    best: tuple[int, str | None] = (-1, None)
    for room, entries in ROOMS.items():
        for entry in entries:
            matches = relative == entry or (entry and relative.startswith(entry + "."))
            if matches and len(entry) > best[0]:
                best = (len(entry), room)
    return best[1]


def summary(path: Path) -> str:
    """A module's docstring, its first paragraph on one line ("" when it has none)."""
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = text.strip().split("\n\n", 1)[0]
    return " ".join(first.split()).replace("|", "\\|")


def _cell(names: tuple[str, ...]) -> str:
    """A room's entries as the paths they are under ``mama_plugin/``."""
    return ", ".join(f"`{_path(n)}`" for n in names)


def _path(entry: str) -> str:
    if not entry:
        return "__init__.py"
    path = entry.replace(".", "/")
    return f"{path}/" if _is_package(entry) else f"{path}.py"


def _is_package(entry: str) -> bool:
    return (ROOT / entry.replace(".", "/") / "__init__.py").is_file() if entry else False


def _note(room: str) -> str:
    entries = ROOMS.get(room, ())
    if room not in NOTES and len(entries) == 1 and _is_package(entries[0]):
        return summary(ROOT / entries[0].replace(".", "/") / "__init__.py")
    return NOTES[room]


def _outside_files(folder: str) -> list[Path]:
    """Every module and data file of a folder outside the package: not its tests, bytecode or
    runs' results (``results/``: the JSON benchmarks/README.md's tables are rendered from, held
    to them by benchmarks/tests/test_tables.py)."""
    top = ROOT.parent / folder
    skip = {"tests", "__pycache__", "results"}
    return sorted(
        f for f in top.rglob("*") if f.is_file() and not skip & set(f.relative_to(top).parts)
    )


def render() -> str:
    """The Rooms section's rendered part: the rooms in order, then each room's modules."""
    lines = [MARK, "", "| room | holds | may import | what it is |", "|---|---|---|---|"]
    for room, entries in ROOMS.items():
        doors = ", ".join(MAY_IMPORT[room]) or "— (standard library only)"
        lines.append(f"| {room} | {_cell(entries)} | {doors} | {_note(room)} |")
    for row, folder in OUTSIDE.items():
        lines.append(f"| {row} | `{folder}/` | every room, by name | {NOTES[row]} |")
    for room in ROOMS:
        lines += ["", f"### {room}", "", "| module | what it is |", "|---|---|"]
        for module, path in MODULES.items():
            if room_of(module) == room:
                name = str(path.relative_to(ROOT))
                lines.append(f"| `{name}` | {summary(path)} |")
    for row, folder in OUTSIDE.items():
        lines += ["", f"### {row}", "", "| file | what it is |", "|---|---|"]
        for path in _outside_files(folder):
            what = summary(path) if path.suffix == ".py" else "data"
            lines.append(f"| `{path.relative_to(ROOT.parent)}` | {what} |")
    return "\n".join([*lines, "", END])


def rendered_section(doc: str) -> str:
    """The rendered part of ``doc``'s Rooms section, markers included ("" when missing)."""
    found = re.search(re.escape(MARK) + r".*?" + re.escape(END), doc, re.S)
    return found.group(0) if found else ""


def main(argv: list[str]) -> int:
    doc = DOC.read_text(encoding="utf-8")
    current, wanted = rendered_section(doc), render()
    if "--check" in argv:
        print("current" if current == wanted else "stale: run python tests/rooms.py")
        return 0 if current == wanted else 1
    if not current:
        print(f"no {MARK!r} in {DOC}", file=sys.stderr)
        return 1
    DOC.write_text(doc.replace(current, wanted), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
