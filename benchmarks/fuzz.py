"""One stdio session of random tool calls and garbage lines (``python -m benchmarks fuzz``).

A real ``mama serve`` (the front Claude Code runs) gets, on one stdin: tool calls with random
arguments shaped loosely by each tool's input schema (right names, wrong types, huge and empty
values, unknown keys), and garbage lines (not JSON, JSON that is not a request, wrong ids,
unknown methods, invalid UTF-8, nesting 1,000 to 100,000 levels deep). After every garbage
line a ``ping`` must still be answered.

Counted: calls unanswered within the deadline (a hang), the process dying (a crash), answers
that say a tool failed inside MAMA (an exception that escaped a handler instead of a clear
error), and, after the session closes, what ``integrity_check`` finds in the store.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from mama_plugin.storage.integrity import integrity_check

from .checkout import ROOT
from .stdio import StdioServer

INTERNAL = "failed inside MAMA"
_GARBAGE: tuple[bytes, ...] = (
    b"not json at all",
    b"{",
    b"[]",
    b"42",
    b'"a string"',
    b"null",
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "id": {}, "method": "tools/call"}',
    b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": "x", "method": "no/such/method"}',
    b'{"jsonrpc": "2.0", "id": "y", "method": "tools/call", "params": 7}',
    b'{"jsonrpc": "2.0", "id": "z", "method": "tools/call", "params": {"name": null}}',
    b'{"jsonrpc": "1.0", "id": "w", "method": "tools/list"}',
    b"\xff\xfe\xfa invalid utf-8 \xc3\x28",
    b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}',
    # Nesting past what Python's JSON reader takes (~1,000 levels ended the server once): as
    # the arguments, inside them, and a line too deep to parse whose id comes last.
    b'{"jsonrpc": "2.0", "id": "d1", "method": "tools/call", "params": {"name": '
    b'"search_by_context", "arguments": ' + b"[" * 1_000 + b"]" * 1_000 + b"}}",
    b'{"jsonrpc": "2.0", "id": "d2", "method": "tools/call", "params": {"name": '
    b'"save_decision", "arguments": {"topic": ' + b'{"a":' * 3_000 + b"1" + b"}" * 3_000 + b"}}}",
    b'{"method": "ping", "params": ' + b"[" * 100_000 + b"]" * 100_000 + b', "id": "d3"}',
)


def _value(rng: random.Random, kind: Any, depth: int = 0) -> Any:
    """A value for a property of schema type ``kind``: usually that type, often not."""
    roll = rng.random()
    if roll < 0.15:
        return rng.choice([None, True, -1, 0.5, "", [], {}, "x" * rng.choice([1, 5_000, 70_000])])
    if kind == "string" or roll < 0.3:
        return rng.choice(["", "auth", "dec_nope", "🙂 한국어 </mama-memory>", "a" * 300,
                           "SUCCESS", "FAILED", "HIGH", "\x00\x01", "' OR 1=1 --"])  # fmt: skip
    if kind in ("integer", "number"):
        return rng.choice([0, 1, 3, -5, 10**12, 2.5, float("inf")])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array" and depth < 2:
        return [
            _value(rng, rng.choice(["string", "object"]), depth + 1)
            for _ in range(rng.randint(0, 3))
        ]
    if kind == "object" and depth < 2:
        return {rng.choice(["step", "priority", "risks", "x"]): _value(rng, "string", depth + 1)}
    return None


def _arguments(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    names = [n for n in properties if rng.random() < 0.7]
    if rng.random() < 0.2:
        names.append(rng.choice(["unknown", "__class__", "id"]))
    out = {}
    for name in names:
        kind = (properties.get(name) or {}).get("type")
        out[name] = _value(rng, kind if isinstance(kind, str) else rng.choice(["string", "array"]))
    return out


def fuzz_run(
    calls: int, *, seed: int = 3, progress: Callable[[str], None] = print
) -> tuple[str, dict[str, Any]]:
    """``calls`` random tool calls (and a garbage line every few) over one stdio session."""
    rng = random.Random(seed)
    counts = {"calls": 0, "garbage": 0, "hangs": 0, "internal": 0, "errors": 0, "crashed": 0}
    samples: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mama-fuzz-") as tmp:
        home, project = Path(tmp), Path(tmp) / "project"
        project.mkdir()
        env = {**os.environ, "MAMA_HOME": str(home)}
        root = str(ROOT)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        server = StdioServer(env, cwd=str(project))
        tools = server.request("tools/list", {}).get("tools", [])
        for n in range(calls):
            if server.proc.poll() is not None:
                counts["crashed"] = 1
                break
            try:
                if rng.random() < 0.1:
                    counts["garbage"] += 1
                    assert server.proc.stdin is not None
                    server.proc.stdin.buffer.write(rng.choice(_GARBAGE) + b"\n")  # type: ignore[attr-defined]
                    server.proc.stdin.flush()
                    server.request("ping", {})
                    continue
                tool = rng.choice(tools)
                _, result = server.call(tool["name"], _arguments(rng, tool.get("inputSchema", {})))
            except (RuntimeError, OSError, ValueError) as exc:
                counts["hangs" if server.proc.poll() is None else "crashed"] += 1
                samples.append(f"{type(exc).__name__}: {exc}")
                break
            counts["calls"] += 1
            said = " ".join(c.get("text", "") for c in result.get("content") or [])
            if result.get("isError"):
                counts["errors"] += 1
            if INTERNAL in said:
                counts["internal"] += 1
                samples.append(said[:200])
            if (n + 1) % 500 == 0:
                progress(f"{n + 1}/{calls} calls")
        if server.proc.poll() is None:
            server.close()
        conn = apsw.Connection(str(home / "mama.db"))
        try:
            problems = integrity_check(conn)
        finally:
            conn.close()
    data = {**counts, "exit_code": server.proc.returncode, "problems": problems,
            "samples": samples[:10]}  # fmt: skip
    text = (
        f"one stdio session, {counts['calls']} random tool calls ({counts['errors']} answered "
        f"with a clear error) and {counts['garbage']} garbage lines\n"
        f"  crashed: {counts['crashed']}  hangs: {counts['hangs']}  "
        f"failed inside MAMA: {counts['internal']}  integrity problems: {len(problems)}  "
        f"exit code: {server.proc.returncode}\n"
    )
    text += "".join(f"    {s}\n" for s in samples[:5])
    return text, json.loads(json.dumps(data, default=str))
