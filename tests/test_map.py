"""docs/map.md, the newcomer's one page, names only what exists: every path and every dotted
name in backquotes resolves to a file, a module, or a name a module defines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mama_plugin"
MAP = ROOT / "docs" / "map.md"
PROTOCOL = {"tools/list"}  # an MCP method the map names, not a file


def _defines(module: Path, name: str) -> bool:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}  # fmt: skip
    return name in defined


def _resolves(token: str) -> bool:
    """A path from the checkout, the package or the services (``server/front.py``,
    ``search/views``), or ``a/b.name``: module ``a/b.py`` defining ``name``."""
    path = token.split(":")[0]
    bases = (ROOT, PACKAGE, PACKAGE / "services")
    if path in PROTOCOL or any((b / path).exists() or (b / f"{path}.py").is_file() for b in bases):
        return True
    head, _, name = path.rpartition(".")
    for base in bases:
        module = base / f"{head}.py"
        if head and module.is_file() and _defines(module, name):
            return True
        package = base / head / "__init__.py"
        if head and package.is_file() and (base / head / f"{name}.py").is_file():
            return True
    return False


def test_the_map_names_only_what_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    tokens = {t for t in re.findall(r"`([^`\s]+)`", text) if "/" in t and not t.startswith("/")}
    assert len(tokens) > 20, tokens
    missing = sorted(t for t in tokens if not _resolves(t.rstrip("/")))
    assert not missing, f"docs/map.md names what is not there: {missing}"


def test_the_map_shows_every_wing() -> None:
    text = MAP.read_text(encoding="utf-8")
    wings = [
        p.name for p in sorted((PACKAGE / "services").iterdir()) if (p / "__init__.py").is_file()
    ]
    assert all(f"    {wing}/" in text for wing in wings), wings
