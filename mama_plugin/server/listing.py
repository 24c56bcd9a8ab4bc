"""What is generated from the tools' declarations (:mod:`.declare`) for readers without them.

``mama_plugin/bootstrap/tools.json``, the static tool list: while MAMA's environment is being
built, the standard-library bridge cannot import pydantic or mcp, so it answers ``tools/list``
from this file, and the light front lists tools from it before the handlers load.
``server/exposure.json``: the core and what each context lists (:mod:`.exposure`), read by the
front the same way. Regenerate both after changing a tool:
``.venv/bin/python -m mama_plugin.server.listing`` (a test fails while either is stale).
README.md's "MCP tools" table is rendered here too (``... listing --readme`` prints it; a test
fails while the README's differs).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from . import hook_tools
from .app import tool_definition
from .catalogue import EXPOSURE_JSON, TOOLS_JSON
from .declare import CONTEXTS, declared_hooks
from .tool_table import TOOLS


def static_listing() -> dict[str, Any]:
    """Every listed tool as ``tools/list`` serializes it, the hidden hook tools' names, and the
    MAMA v1.0 tools (served, listed only when ``legacy_tools_listed`` is on).

    The hook tools' names come from their declarations (:mod:`.hook_tools`): while the
    environment is not ready the bridge answers them with ``{}`` so hooks stay silent.
    """
    tools = [
        tool_definition(t).model_dump(by_alias=True, exclude_none=True, mode="json")
        for t in TOOLS
        if not t.hidden
    ]
    hooks = [h.name for h in declared_hooks(hook_tools)]
    legacy = [
        tool_definition(t).model_dump(by_alias=True, exclude_none=True, mode="json")
        for t in TOOLS
        if t.replaced_by
    ]
    return {"tools": tools, "hook_tools": hooks, "legacy_tools": legacy}


def render() -> str:
    """The file's exact text."""
    return json.dumps(static_listing(), indent=1, ensure_ascii=False) + "\n"


def exposure() -> dict[str, Any]:
    """The core and each context's tools, in the table's order, and the link tool (whose
    schema grows word parameters), from the declarations."""
    contexts = {c: [t.name for t in TOOLS if c in t.contexts] for c in CONTEXTS}
    (worded,) = [t.name for t in TOOLS if t.word_parameters]
    return {
        "core": [t.name for t in TOOLS if t.core],
        "contexts": {c: names for c, names in contexts.items() if names},
        "word_parameters": worded,
    }


def render_exposure() -> str:
    """``exposure.json``'s exact text."""
    return json.dumps(exposure(), indent=1, ensure_ascii=False) + "\n"


def readme_table() -> str:
    """README.md's "MCP tools" table: every tool, when Claude Code lists it, what it does; then
    the MAMA v1.0 names and the hook tools, which are never listed."""
    rows = ["| Tool | Listed for Claude Code | What it does |", "| --- | --- | --- |"]
    for t in sorted(TOOLS, key=lambda t: bool(t.replaced_by)):  # stable: the table's order
        if t.replaced_by:
            listed = "only with `legacy_tools_listed`: a MAMA v1.0 name"
        else:
            when = "for " + ", ".join(t.contexts) if t.contexts else "on request (`more_tools`)"
            listed = "always" if t.core else when
        # Escaped for Markdown: a | would end the cell, a <id> be read as an HTML tag.
        said = t.description.replace("|", "\\|").replace("<", "&lt;")
        rows.append(f"| `{t.name}` | {listed} | {said} |")
    for h in declared_hooks(hook_tools):
        rows.append(f"| `{h.name}` | never | What Claude Code's {h.event} hook calls. |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        print(readme_table(), end="")
        raise SystemExit(0)
    TOOLS_JSON.write_text(render(), encoding="utf-8")
    EXPOSURE_JSON.write_text(render_exposure(), encoding="utf-8")
    print(f"wrote {TOOLS_JSON} and {EXPOSURE_JSON}")
