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
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checkout import ROOT
from .latency import percentile
from .phases import PHASES

if TYPE_CHECKING:
    from .presence import Run

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


def arm_lines(
    label: str,
    other: list[Run],
    mine: list[Run],
    without: list[Run],
    data: dict[str, Any],
    *,
    counts: bool = True,
) -> tuple[str, dict[str, Any]]:
    """Another arm (``label``) of the same rounds beside this checkout's: its wall time, what
    it adds over no plugin, this checkout over it, and each phase's median side by side.
    ``counts``: also whether it was there (tools, prompt hook, Stop; not for the floor)."""
    n = len(other)
    walls, bare = [r.wall_s for r in other], [r.wall_s for r in without]
    added = percentile(walls, 50) - percentile(bare, 50)
    above = percentile([r.wall_s for r in mine], 50) - percentile(walls, 50)
    figures: dict[str, Any] = {
        "p50_s": round(percentile(walls, 50), 2),
        "p95_s": round(percentile(walls, 95), 2),
        "added_p50_s": round(added, 2),
        "this_checkout_above_p50_s": round(above, 2),
        "cpu_p50_s": cpu_p50([r.cpu_s for r in other]),
    }
    lines = []
    if counts:
        present = {
            name: sum(getattr(r, name) for r in other)
            for name in (
                "tools_on_first_request",
                "prompt_hook_injected",
                "stop_checkpoint_written",
                "prompt_by_vectors",
            )
        }
        figures |= present
        figures["observe_prompt_p50_ms"] = p50([r.observe_ms for r in other])
        lines.append(
            f"  {label}, same rounds: tools {present['tools_on_first_request']}/{n}, prompt "
            f"hook {present['prompt_hook_injected']}/{n} (by vectors "
            f"{present['prompt_by_vectors']}/{n}), Stop {present['stop_checkpoint_written']}/{n}\n"
        )
    lines += [
        f"  {label} wall p50 {figures['p50_s']:.2f} s, p95 {figures['p95_s']:.2f} s; added p50 "
        f"{added:.2f} s (this checkout: {data['added_p50_s']} s, {above:+.2f} s beside it); CPU "
        f"per run p50 {figures['cpu_p50_s']} s (this checkout: {data['cpu_with_p50_s']} s)\n",
        f"  phases, p50 ms (this checkout | {label}):\n",
    ]
    table = {}
    for name, _, _ in PHASES:
        a = p50([r.phases.get(name) for r in mine])
        b = p50([r.phases.get(name) for r in other])
        if a is not None or b is not None:
            table[name] = {"this": a, "other": b}
            lines.append(f"    {name:<36} {a if a is not None else '—':>8} | "
                         f"{b if b is not None else '—'}\n")  # fmt: skip
    figures["phases_p50_ms"] = table
    figures["runs_detail"] = [asdict(r) for r in other]
    return "".join(lines), figures


def p50(values: list[float | None]) -> float | None:
    """The median of the values known (None when none is), to a tenth."""
    known = [v for v in values if v is not None]
    return round(percentile(known, 50), 1) if known else None


def cpu_p50(values: list[float]) -> float | None:
    """The median CPU seconds of the runs, to a hundredth (None without runs)."""
    return round(percentile(values, 50), 2) if values else None
