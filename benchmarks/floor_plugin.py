"""The floor under MAMA's cost per ``claude -p``: a plugin of MAMA's shape that does nothing.

MAMA's per-session cost is its hooks' and server's work *plus* what Claude Code spends on any
plugin of its shape: loading a plugin with hooks and an MCP server, spawning a command hook at
SessionStart (and waiting for it), spawning a stdio server (and, with the default settings,
waiting for its connection), calling an ``mcp_tool`` hook at UserPromptSubmit and at Stop, and
signalling the server at the end. :func:`write_floor_plugin` writes that shape with nothing in
it: the same ``hooks/hooks.json`` (read from this checkout, so it follows MAMA's events, matchers
and inputs) whose SessionStart command runs a Python that reads its event and exits, and an
``.mcp.json`` server in the standard library answering ``initialize``, ``tools/list`` and every
``tools/call`` at once. Both run on the interpreter MAMA's hooks use. Run as an arm of
``python -m benchmarks presence --floor``, it splits the added time into the shape's share
(floor against no plugin) and MAMA's own (MAMA against the floor), in the same rounds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .checkout import ROOT

SERVER = """\
import json, sys

# MAMA's hook tools, answered at once with the hook protocol's "nothing to add".
TOOLS = [{"name": name, "description": "floor", "inputSchema": {"type": "object"}}
         for name in ("observe_prompt", "checkpoint_turn")]
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if not isinstance(message, dict) or "id" not in message:
        continue  # a notification
    method = message.get("method")
    if method == "initialize":
        asked = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
        result = {"protocolVersion": asked, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "mama-floor", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "{}"}]}
    else:
        result = {}
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""
HOOK = "import json, sys\n\njson.loads(sys.stdin.read() or '{}')  # the event, read and left\n"


def write_floor_plugin(folder: Path, python: str = sys.executable) -> Path:
    """Write the floor plugin into ``folder`` (created) and return it; ``python`` runs its
    hook and its server (default: this interpreter, the checkout's environment)."""
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / "hooks").mkdir(exist_ok=True)
    (folder / "bin").mkdir(exist_ok=True)
    manifest = {"name": "mama", "version": "0.0.0", "description": "MAMA's shape, nothing in it"}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), "utf-8")
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text("utf-8"))
    for group in hooks["hooks"].get("SessionStart", []):
        for hook in group["hooks"]:
            if hook.get("type") == "command":
                hook["command"] = 'sh "${CLAUDE_PLUGIN_ROOT}/bin/hook"'
    (folder / "hooks" / "hooks.json").write_text(json.dumps(hooks, indent=2), "utf-8")
    mcp = json.loads((ROOT / ".mcp.json").read_text("utf-8"))
    (server,) = mcp["mcpServers"].values()
    server["args"] = ["${CLAUDE_PLUGIN_ROOT}/bin/server"]
    (folder / ".mcp.json").write_text(json.dumps(mcp, indent=2), "utf-8")
    for name, source in (("hook", HOOK), ("server", SERVER)):
        (folder / "bin" / f"{name}.py").write_text(source, "utf-8")
        launcher = f'#!/bin/sh\nexec "{python}" -P "$(dirname "$0")/{name}.py"\n'
        (folder / "bin" / name).write_text(launcher, "utf-8")
    return folder
