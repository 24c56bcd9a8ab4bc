"""Record the light and follow-up sessions of ``python -m benchmarks story`` with real Claude Code.

``python -m benchmarks.story_record [NAME ...]`` records the sessions scripted in
``benchmarks/data/story_sessions.json`` into ``benchmarks/data/story_transcripts/<name>.jsonl``
through scripts/record_transcripts.py's recorder: real Claude Code, offline, against the
scripted Messages API of tests/fake_anthropic.py, tools run for real on the session's files,
the transcript copied out unchanged but for the recorder's placeholders. Only the way a
session's files are given differs from the recorder's own script files: a named set that
builds on another (``file_sets``), so successive states of one project are written once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .checkout import DATA, ROOT

SESSIONS = DATA / "story_sessions.json"
OUT = DATA / "story_transcripts"


def files_of(spec: dict[str, Any], name: str) -> dict[str, str]:
    """A session's ``files``: a named set (its ``base`` first) or ``@<script file>``'s files."""
    if name.startswith("@"):
        given: dict[str, str] = json.loads((DATA / name[1:]).read_text(encoding="utf-8"))["files"]
        return dict(given)
    wanted = dict(spec["file_sets"][name])
    base = wanted.pop("base", None)
    return {**(files_of(spec, base) if base else {}), **wanted}


def fixture(spec: dict[str, Any], name: str) -> Any:
    """The recorder's Fixture for session ``name`` (as transcript_fixtures.scripted builds one)."""
    from transcript_fixtures import Fixture

    from tests.fake_anthropic import text, tool_use

    session = spec["sessions"][name]
    built = Fixture(name, files=files_of(spec, session["files"]), turns=[])
    built.plugin = bool(session.get("plugin"))
    built.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    for turn in session["turns"]:
        replies = []
        for call in turn["calls"]:
            given = json.dumps(call["input"]).replace("{p}", str(built.project))
            replies.append(tool_use(call["tool"], json.loads(given.replace("{plugin}", str(ROOT)))))
        built.turns.append((turn["prompt"], [*replies, text(turn["say"])]))
        built.expected_errors += sum(bool(call.get("fails")) for call in turn["calls"])
    return built


def main(argv: list[str]) -> int:
    """Record the named sessions (all by default); 1 when one could not be recorded."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import record_transcripts as recorder

    spec = json.loads(SESSIONS.read_text(encoding="utf-8"))
    names = argv or list(spec["sessions"])
    unknown = [n for n in names if n not in spec["sessions"]]
    if unknown:
        print(f"story_record: unknown session {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        claude = recorder.find_claude(None)
        version = recorder.claude_version(claude)
        for name in names:
            started = time.monotonic()
            target = recorder.record(claude, fixture(spec, name), OUT)
            took = time.monotonic() - started
            print(f"{target}: {target.stat().st_size:,} bytes, Claude Code {version}, {took:.1f} s")
    except recorder.RecordingError as exc:
        print(f"story_record: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
