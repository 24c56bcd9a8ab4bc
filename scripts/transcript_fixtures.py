"""A session scripts/record_transcripts.py records, and the sessions of the script files.

A :class:`Fixture` is one project's files and, per prompt, the model's script. Two are
written by hand (scripts/handwritten_fixtures.py); the rest are read from the script files
of the benchmarks (``benchmarks/data/extraction_labels.json``, ``truth_sessions.json``).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: the tests' fake model
from tests.fake_anthropic import text, tool_use  # noqa: E402

TX = Path("/tmp/tx")


@dataclass
class Fixture:
    """One session to record: the project's files, then each prompt with the model's script."""

    name: str
    files: dict[str, str]
    turns: list[tuple[str, list[dict[str, Any]]]]
    expected_errors: int = 0  # tool results Claude Code marks is_error
    env: dict[str, str] = field(default_factory=dict)
    setup: list[str] = field(default_factory=list)  # shell commands run in the project first
    plugin: bool = False  # Claude Code loads this checkout as a plugin (MAMA's server, hooks)

    @property
    def project(self) -> Path:
        return TX / self.name / "project"

    @property
    def session_id(self) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"mama-fixture:{self.name}"))

    @property
    def script(self) -> list[dict[str, Any]]:
        return [reply for _, replies in self.turns for reply in replies]


# -- the scripted sessions: `python -m benchmarks extraction`'s labelled turns, then `truth`'s ---
SCRIPTS = [
    ROOT / "benchmarks" / "data" / f for f in ("extraction_labels.json", "truth_sessions.json")
]
PLUGIN_PLACEHOLDER, MAMA_PLACEHOLDER = "/tmp/tx/plugin", "/tmp/tx/mama"
# Setup commits get a fixed author and date: the same hashes on every recording.
_GIT_ID = {"NAME": "Fixture", "EMAIL": "fixture@example.com", "DATE": "2026-11-20T10:00:00+00:00"}
GIT_ENV = {f"GIT_{who}_{k}": v for who in ("AUTHOR", "COMMITTER") for k, v in _GIT_ID.items()}


def scripted(path: Path, name: str) -> Callable[[], Fixture]:
    """A session of a script file: its files (the file's, or its own), its setup commands, and
    per turn the prompt, the calls ({p}: the project, {plugin}: this checkout), the closing."""

    def build() -> Fixture:
        spec = json.loads(path.read_text())
        session = spec["sessions"][name]
        files = session.get("files") or spec["files"]
        fixture = Fixture(name, files=files, turns=[], setup=session.get("setup") or [])
        fixture.plugin = bool(session.get("plugin"))
        fixture.env.update(session.get("env") or {})
        # `python` is the recording interpreter (it has pytest).
        fixture.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        for turn in session["turns"]:
            replies = []
            for call in turn["calls"]:
                given = json.dumps(call["input"]).replace("{p}", str(fixture.project))
                replies.append(
                    tool_use(call["tool"], json.loads(given.replace("{plugin}", str(ROOT))))
                )
            fixture.turns.append((turn["prompt"], [*replies, text(turn["say"])]))
            fixture.expected_errors += sum(bool(call.get("fails")) for call in turn["calls"])
        return fixture

    return build


def scripted_fixtures() -> dict[str, Callable[[], Fixture]]:
    """Every session of the script files, by name."""
    return {
        name: scripted(path, name)
        for path in SCRIPTS
        for name in json.loads(path.read_text())["sessions"]
    }
