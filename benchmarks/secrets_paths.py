"""The write paths the ``secrets`` benchmark drives: a real server's tools, a transcript, an export.

Each case's text goes into every field a user or Claude can fill; the transcript holds each case
as a prompt, a command, its output and an answer, plus commands cut where the rolling
checkpoint clips them (:data:`CLIPS`), so a credential cut short is tried too.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .secrets_corpus import Case
from .stdio import StdioServer

CLIPS = (120, 300, 400)  # the lengths the rolling checkpoint clips commands and sentences to


def through_tools(
    server: StdioServer,
    cases: list[Case],
    project: Path,
    tmp: Path,
    answers: list[str],
    errors: Counter[str],
) -> tuple[int, int]:
    calls = 0

    def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        _, result = server.call(tool, args)
        calls += 1
        if result.get("isError"):
            errors[tool] += 1
        answers.append(json.dumps(result))
        return result

    first = call(
        "save_decision",
        {
            "topic": "bench_base",
            "decision": "Base decision",
            "reasoning": {"primary": "Anchor for links in this run"},
        },
    )
    base = _id_in(first)
    for case in cases:
        t = case.text
        link = {
            "to_id": base,
            "relationship": "relates_to",
            "reason": f"because {t}",
            "evidence": t,
            "context": t,
        }
        saved = call(
            "save_decision",
            {
                "topic": f"bench_{case.kind}",
                "decision": f"Deploy with {t}",
                "reasoning": {
                    "primary": f"It works: {t}",
                    "secondary": [t],
                    "alternatives_considered": [{"option": t, "rejected_because": t}],
                },
                "specifics": [t],
                "evidence": [{"source": t, "detail": t}],
                "tension": {"concerns": [t], "trade_offs": [t], "risks": [t]},
                "next_steps": [t],
                "tags": ["bench"],
                "links": [link],
            },
        )
        decision = _id_in(saved)
        call(
            "save_checkpoint",
            {
                "summary": t,
                "what_was_done": [t],
                "what_remains": [t],
                "next_steps": [t],
                "open_files": [t],
                "links": [link],
            },
        )
        call("save_insight", {"content": t, "topic": f"insight_{case.kind}", "evidence": [t]})
        call(
            "save_insight",
            {
                "content": f"Lesson: {t}",
                "links": [link],
                "evidence": [{"source": "observation", "detail": t}],
            },
        )
        if decision:
            call(
                "evolve_outcome",
                {
                    "memory_id": decision,
                    "outcome": "PARTIAL",
                    "details": t,
                    "evidence": [t],
                    "learned": [t],
                },
            )
        call(
            "save_decision",
            {
                "topic": "bench_draft",
                "decision": f"Use {t}",
                "draft": True,
                "context": f"We decided to use {t} because it was faster.",
            },
        )
        call(
            "save_decision",
            {
                "topic": t[:200],
                "decision": t,
                "reasoning": {"primary": t},
                "confidence": f"not a number {t}",
            },
        )
        call("observe_prompt", {"prompt": f"what about {t}?", "session_id": "bench"})
    session = transcript(tmp, cases)
    call(
        "checkpoint_turn",
        {
            "session_id": "bench-turn",
            "transcript_path": str(session),
            "cwd": str(project),
            "stop_hook_active": "false",
            "last_assistant_message": "\n".join(c.text for c in cases),
        },
    )
    # Link suggestions: decisions on one topic within minutes are proposed as linked (a rule
    # of the seeds); each is accepted with a reason made of cases, until every case was one.
    pair = ""
    for n in range(6):
        step = {"primary": f"Step {n} of the pair"}
        saved = call(
            "save_decision", {"topic": "bench_pair", "decision": f"Pair {n}", "reasoning": step}
        )
        pair = _id_in(saved) or pair
    if pair:
        call("suggest_links", {"memory_id": pair, "limit": 50})
    listed = call("suggest_links", {"limit": 50})
    ids = [int(n) for n in re.findall(r"^#(\d+) ", _text(listed), re.MULTILINE)]
    reasons = _chunks([case.text for case in cases], 1_900)
    for suggestion, reason in zip(ids, reasons, strict=False):
        call("evolve_link", {"suggestion_id": suggestion, "verdict": "accept", "reason": reason})
    return calls, sum(len(r) for r in reasons[: len(ids)])


def _text(result: dict[str, Any]) -> str:
    return " ".join(c.get("text", "") for c in result.get("content") or [])


def _chunks(texts: list[str], limit: int) -> list[str]:
    """``texts`` joined into reasons of at most ``limit`` characters."""
    chunks: list[str] = []
    for text in texts:
        if chunks and len(chunks[-1]) + len(text) + 2 <= limit:
            chunks[-1] += "; " + text
        else:
            chunks.append(text[:limit])
    return chunks


def _id_in(result: dict[str, Any]) -> str:
    """The decision id a save's answer names (the stdio front answers in text)."""
    for word in _text(result).replace("`", " ").split():
        if word.startswith("dec_"):
            return word.strip(".,:;()")
    return ""


def transcript(folder: Path, cases: list[Case]) -> Path:
    """A Claude Code transcript where each case is prompted, run, printed and answered."""
    lines: list[dict[str, Any]] = []
    for i, case in enumerate(cases):
        lines += [
            {"type": "user", "message": {"role": "user", "content": f"Use {case.text}"}},
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": f"Decided: we use {case.text} because it is faster.",
                        },
                        {
                            "type": "tool_use",
                            "id": f"b{i}",
                            "name": "Bash",
                            "input": {"command": case.text, "description": "run it"},
                        },
                    ],
                },
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"b{i}",
                            "content": case.text,
                            "is_error": True,
                        }
                    ],
                },
            },
        ]
        for limit in CLIPS:
            if command := cut_at(case, limit):
                lines += [
                    {
                        "type": "assistant",
                        "message": {
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": f"c{i}_{limit}",
                                    "name": "Bash",
                                    "input": {"command": command},
                                }
                            ],
                        },
                    },
                    {
                        "type": "user",
                        "message": {
                            "role": "user",
                            "content": [
                                {
                                    "type": "tool_result",
                                    "tool_use_id": f"c{i}_{limit}",
                                    "content": command,
                                    "is_error": True,
                                }
                            ],
                        },
                    },
                ]
    lines.append(
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Next: rotate " + "; ".join(c.text for c in cases)}
                ],
            },
        }
    )
    path = folder / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def cut_at(case: Case, limit: int) -> str:
    """A command whose first ``limit - 1`` characters end two thirds into the secret.

    The rolling checkpoint clips commands and failures to a few hundred characters: a secret
    cut there must be masked all the same (a clipped token no longer matches its full rule).
    """
    flat, secret = " ".join(case.text.split()), " ".join(case.secret.split())
    at = flat.find(secret)
    pad = limit - 1 - max(8, len(secret) * 2 // 3) - at - len("echo  ")
    if at < 0 or pad < 0:
        return ""
    return "echo " + ("ok " * limit)[:pad] + " " + flat


def dump(cases: list[Case], project: str) -> dict[str, Any]:
    """A MAMA JSON export holding every case, as ``mama import`` reads one."""
    now = int(time.time() * 1000)
    memories = [
        {
            "seq": i + 1,
            "id": f"dec_import_{i}",
            "type": "decision",
            "project": project,
            "topic": f"import_{c.kind}",
            "content": c.text,
            "specifics": [c.text],
            "evidence": [c.text],
            "reasoning": {"primary": c.text},
            "tension": {},
            "continuity": {},
            "outcome_status": "PENDING",
            "outcome": {},
            "confidence": 0.7,
            "tags": [],
            "status": "current",
            "session_id": "",
            "metadata": {"note": c.text},
            "times_used": 0,
            "last_used": None,
            "created_at": now,
            "updated_at": now,
            "version": 1,
        }
        for i, c in enumerate(cases)
    ]
    links = [
        {
            "id": i + 1,
            "from_id": f"dec_import_{i + 1}",
            "to_id": f"dec_import_{i}",
            "relationship": "refines",
            "reason": c.text,
            "evidence": c.text,
            "context": c.text,
            "link_category": "evolution",
            "confidence": 1.0,
            "created_by": "user",
            "created_at": now,
        }
        for i, c in enumerate(cases[:-1])
    ]
    return {"format": "mama-export", "format_version": 1, "memories": memories, "links": links}
