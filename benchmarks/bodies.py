"""``python -m benchmarks bodies``: what the model reads from MAMA over ten real sessions.

One project, ten ``claude -p`` sessions in a row (real Claude Code from ``.tools/``, the
plugin loaded with ``--plugin-dir``, default settings, the scripted Messages API of
tests/fake_anthropic.py): a decision, a greeting, a failed load test and the replacement, a
question the prompt hook answers, ``/mama-resume``, a search, a ``/mama-save`` draft and its
save, a checkpoint, a greeting, a "why". From every request body Claude Code sent, in tokens of
4 characters (what the model reads): MAMA's tool list (name, description, schema of each
``mcp__plugin_mama_mama__`` tool) on the session's first request and its largest, the
SessionStart and UserPromptSubmit context, and MAMA's tool results. ``uptime`` is printed
before and after.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .checkout import CLAUDE, ROOT, fake_anthropic
from .presence import check_claude

T = "mcp__plugin_mama_mama__"
TIMEOUT_S = 180
JWT = {"topic": "auth_strategy", "decision": "Stateless JWT access tokens for API auth",
       "reasoning": {"primary": "no session store to run: two API nodes verify tokens alone",
                     "alternatives_considered": [{"option": "Redis sessions",
                                                  "rejected_because": "one more service"}]},
       "next_steps": [{"step": "Load test auth at 10K req/s", "priority": "HIGH"}]}  # fmt: skip
REDIS = {"topic": "auth_strategy", "decision": "Server-side sessions in Redis for API auth",
         "reasoning": {"primary": "token refresh hit the DB: p99 307 ms at 10K req/s with JWT"},
         "tension": {"risks": ["Redis is a single point of failure until Sentinel runs"]},
         "next_steps": [{"step": "Set up Redis Sentinel", "priority": "HIGH"}]}  # fmt: skip


def _sessions() -> list[tuple[str, str, list[Any]]]:
    """(label, prompt, the model's script) of each session; ``$jwt`` is the first decision."""
    fake = fake_anthropic()
    tool, text = fake.tool_use, fake.text
    return [
        ("decide", "Should the API use JWT or sessions? Go with JWT and save it.",
         [tool(T + "save_decision", JWT), text("Saved: JWT.")]),
        ("hello", "hello", [text("Hello.")]),
        ("fail and replace", "The load test failed: JWT refresh fell over at 10K req/s. Record "
         "it and move us to Redis sessions.",
         [tool(T + "evolve_outcome", {"memory_id": "$jwt", "outcome": "FAILED",
                                      "details": "p99 307 ms at 10K req/s"}),
          tool(T + "save_decision", {**REDIS, "supersedes": "$jwt"}),
          text("Recorded; auth moves to Redis sessions.")]),
        ("ask", "What auth should a high-traffic service of ours use?",
         [text("Redis sessions: JWT failed at 10K req/s.")]),
        ("resume", "/mama-resume", [tool(T + "load_checkpoint", {}), text("Picking up.")]),
        ("search", "Why did we move off JWT?",
         [tool(T + "search_by_context", {"query": "why did we move off JWT"}),
          text("Token refresh hit the DB at 10K req/s.")]),
        ("/mama-save", "/mama-save the Redis Sentinel plan",
         [tool(T + "save_decision", {"decision": "Run Redis with Sentinel", "draft": True}),
          tool(T + "save_decision", {"topic": "redis_ha", "decision": "Run Redis with Sentinel",
                                     "reasoning": "auth sessions must survive a Redis node loss"}),
          text("Saved.")]),
        ("checkpoint", "Done for today, save where we are.",
         [tool(T + "save_checkpoint", {
             "summary": "Auth moved to Redis sessions; Sentinel planned",
             "next_steps": [{"step": "Set up Redis Sentinel", "priority": "HIGH"}]}),
          text("Saved where we are.")]),
        ("hello again", "hello", [text("Hello.")]),
        ("why", "why did we drop JWT?", [text("It failed the load test.")]),
    ]  # fmt: skip


@dataclass
class Session:
    """What the model read from MAMA in one session, in tokens."""

    label: str
    requests: int
    tools_first: int  # MAMA's tool list on the session's first request
    tools_max: int  # and on its largest
    session_start: int
    instructions: int  # the server's initialize instructions, in every request
    prompt_memory: int
    tool_results: int  # MAMA's tool results the model read back
    errors: int  # MAMA tool results that were errors


def _tokens(value: Any) -> int:
    return round(len(value if isinstance(value, str) else json.dumps(value)) / 4)


def _blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[Any] = []
    for message in request.get("messages", []):
        content = message.get("content")
        out += content if isinstance(content, list) else [{"type": "text", "text": content}]
    return [b for b in out if isinstance(b, dict)]


def _system(request: dict[str, Any]) -> str:
    """The block Claude Code puts the hooks' context and the servers' instructions in."""
    for block in _blocks(request):
        body = str(block.get("text", ""))
        if "hook additional context" in body or "# MCP Server Instructions" in body:
            return body
    return ""


def _start(text: str) -> str:
    """MAMA's session start: its header to the line after its fence ("" if none)."""
    found = re.search(r"MAMA — .*?</mama-memory>\n[^\n]*", text.split(_PROMPT)[0], re.S)
    return found.group(0) if found else ""


def _prompt_memory(text: str) -> str:
    """What the UserPromptSubmit hook added (it comes last in the block)."""
    return text.split(_PROMPT, 1)[1] if _PROMPT in text else ""


def _instructions(text: str) -> str:
    found = re.search(r"## plugin:mama:mama\n(.*?)(?:\n\n|$)", text, re.S)
    return found.group(1) if found else ""


_PROMPT = "UserPromptSubmit hook additional context:"


def _results(request: dict[str, Any]) -> tuple[int, int]:
    """MAMA's tool results in the request's last message: tokens and errors."""
    calls = {b["id"] for b in _blocks(request) if b.get("type") == "tool_use"
             and str(b.get("name", "")).startswith(T)}  # fmt: skip
    last = request["messages"][-1].get("content") if request.get("messages") else None
    found = [b for b in last if isinstance(b, dict)] if isinstance(last, list) else []
    mine = [b for b in found if b.get("type") == "tool_result" and b.get("tool_use_id") in calls]
    return sum(_tokens(b.get("content", "")) for b in mine), sum(
        bool(b.get("is_error")) for b in mine
    )


def _measure(label: str, requests: list[dict[str, Any]]) -> Session:
    lists = [_tokens([t for t in r.get("tools", []) if t.get("name", "").startswith(T)])
             for r in requests]  # fmt: skip
    results = [_results(r) for r in requests]
    first = requests[0] if requests else {}
    return Session(
        label,
        len(requests),
        lists[0] if lists else 0,
        max(lists, default=0),
        _tokens(_start(_system(first))),
        _tokens(_instructions(_system(first))),
        _tokens(_prompt_memory(_system(first))),
        sum(r[0] for r in results),
        sum(r[1] for r in results),
    )


def bodies_run(*, progress: Any = None) -> tuple[str, dict[str, Any]]:
    """Run the ten sessions; the report and its figures."""
    check_claude()
    say = progress or (lambda _line: None)
    fake = fake_anthropic()
    before = _uptime()
    measured: list[Session] = []
    with tempfile.TemporaryDirectory(prefix="mama-bench-bodies-") as folder:
        home, project, mama_home = (Path(folder) / n for n in ("home", "project", "mama"))
        for path in (home, project):
            path.mkdir()
        ids: dict[str, str] = {}
        for number, (label, prompt, script) in enumerate(_sessions(), 1):
            script = json.loads(json.dumps(script).replace("$jwt", ids.get("jwt", "$jwt")))
            with fake.FakeAnthropic(script) as model:
                env = fake.claude_env(model, home, MAMA_HOME=str(mama_home))
                env.pop("MCP_CONNECTION_NONBLOCKING", None)  # the default settings
                command = [str(CLAUDE), "-p", prompt, "--plugin-dir", str(ROOT),
                           "--allowedTools", T.rstrip("_")]  # fmt: skip
                subprocess.run(command, cwd=project, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=TIMEOUT_S, check=False)  # fmt: skip
                requests = model.main_requests
            if label == "decide":
                ids["jwt"] = _saved_id(requests)
            measured.append(_measure(label, requests))
            say(f"session {number}/10 ({label}): {len(requests)} requests")
    data = {
        "sessions": [asdict(s) for s in measured],
        "totals": {
            k: sum(getattr(s, k) for s in measured)
            for k in (
                "requests",
                "session_start",
                "instructions",
                "prompt_memory",
                "tool_results",
                "errors",
            )
        },
        "tool_list_first_max": max(s.tools_first for s in measured),
        "tool_list_max": max(s.tools_max for s in measured),
        "uptime": [before, _uptime()],
        "claude_code": _version(),
    }
    return render(data), data


def _saved_id(requests: list[dict[str, Any]]) -> str:
    for request in requests:
        for block in _blocks(request):
            if block.get("type") == "tool_result":
                words = str(block.get("content", "")).split()
                found = [w for w in words if w.startswith("dec_")]
                if found:
                    return found[0].strip(".,'\"")
    return "dec_missing"


def render(data: dict[str, Any]) -> str:
    """The report: one row per session, then the totals."""
    lines = [
        f"What the model read from MAMA over 10 real Claude Code {data['claude_code']} sessions "
        "(tokens of 4 characters, from the request bodies)",
        f"  uptime before: {data['uptime'][0]}",
        f"  uptime after:  {data['uptime'][1]}",
        "",
        "| session | requests | tool list (first / largest) | session start | instructions "
        "| prompt memory | tool results | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in data["sessions"]:
        lines.append(
            f"| {s['label']} | {s['requests']} | {s['tools_first']:,} / {s['tools_max']:,} | "
            f"{s['session_start']} | {s['instructions']} | {s['prompt_memory']} | "
            f"{s['tool_results']} | {s['errors']} |"
        )
    t = data["totals"]
    lists = f"≤ {data['tool_list_first_max']:,} / ≤ {data['tool_list_max']:,}"
    lines.append(
        f"| all | {t['requests']} | {lists} | {t['session_start']} | {t['instructions']} | "
        f"{t['prompt_memory']} | {t['tool_results']} | {t['errors']} |"
    )
    return "\n".join(lines) + "\n"


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _version() -> str:
    package = ROOT / ".tools" / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        return str(json.loads(package.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return "?"
