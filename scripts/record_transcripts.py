"""Record real Claude Code transcripts for tests/fixtures/transcripts/, offline and reproducibly.

Each fixture is one real Claude Code session (``claude -p``) driven by a scripted model: the
fake Messages API of tests/fake_anthropic.py answers every agent-loop request with the next
scripted reply (a tool call, or a closing text), and Claude Code runs the tools for real on a
small project created beforehand in ``/tmp/tx/<fixture>/project`` (a fixed path, so the paths
in the transcript are the same on every run). HOME is a fresh temporary directory; the session
transcript Claude Code writes there (``$HOME/.claude/projects/<cwd>/<session>.jsonl``) is
copied out unchanged, except that the temporary HOME path, if it appears, becomes
``/tmp/tx/home``. The session id is derived from the fixture name, so it is stable too.

Scripted sessions (``benchmarks/data/extraction_labels.json`` and ``truth_sessions.json``) may
name their own files, ``setup`` commands run in the project first (git with a fixed author and
date, so commit hashes are stable), an ``env`` for Claude Code, and ``plugin``: Claude Code then
loads this checkout as a plugin (``--plugin-dir``; MAMA's server and hooks run, MAMA's store in
the temporary HOME), and the checkout's path and MAMA's home are written ``/tmp/tx/plugin`` and
``/tmp/tx/mama`` in the transcript.

A one-prompt fixture passes its prompt with ``-p``; a fixture with several prompts sends them
one at a time over ``--input-format stream-json`` and waits for each turn's result. After a
recording the script checks that the model used exactly its script (no fallback replies) and
that only the expected tool calls failed, so a Claude Code upgrade that changes tool names or
behaviour fails loudly instead of producing a quietly different fixture.

Usage (standard library only, plus tests/fake_anthropic.py):

    .venv/bin/python scripts/record_transcripts.py [--out DIR] [--claude PATH] [NAME ...]

Claude Code is looked up in ``.tools/`` of this checkout (scripts/setup.sh --dev installs it),
then in ``.tools/`` next to the running interpreter's virtualenv, then on PATH. Nothing leaves
127.0.0.1. The fixtures in the repository were recorded with Claude Code 2.1.197.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: its benchmarks and the tests' fake model
from benchmarks.stream import next_result, read_events  # noqa: E402
from mama_plugin.errors import MamaError  # noqa: E402
from tests.fake_anthropic import DONE_TEXT, FakeAnthropic, claude_env  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))  # run from elsewhere, as `python -m` or imported
from handwritten_fixtures import FIXTURES as HANDWRITTEN  # noqa: E402
from transcript_fixtures import (  # noqa: E402
    GIT_ENV,
    MAMA_PLACEHOLDER,
    PLUGIN_PLACEHOLDER,
    Fixture,
    scripted_fixtures,
)

RECORDED_WITH = "2.1.197"
TOOLS = "Read,Edit,Write,Bash,TaskCreate,TaskUpdate"
HOME_PLACEHOLDER = "/tmp/tx/home"
TURN_TIMEOUT_S = 180
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "transcripts"
FIXTURES: dict[str, Callable[[], Fixture]] = {**HANDWRITTEN, **scripted_fixtures()}


# -- recording ------------------------------------------------------------------------------------


class RecordingError(Exception):
    """A recording could not be made, or came out different from its script."""


def find_claude(explicit: str | None) -> Path:
    """The Claude Code executable, or a RecordingError saying how to install it."""
    if explicit:
        candidates = [Path(explicit)]
    else:
        bin_path = Path(".tools") / "node_modules" / ".bin" / "claude"
        candidates = [ROOT / bin_path, Path(sys.prefix).parent / bin_path]
        on_path = shutil.which("claude")
        if on_path:
            candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise RecordingError(
        f"Claude Code not found (tried {tried}). Run scripts/setup.sh --dev, which installs "
        "@anthropic-ai/claude-code into .tools/, or pass --claude PATH."
    )


def claude_version(claude: Path) -> str:
    """``claude --version``'s number, e.g. 2.1.197."""
    try:
        out = subprocess.run(
            [str(claude), "--version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise RecordingError(f"{claude} --version failed: {exc}") from exc
    return out.split()[0] if out.split() else "unknown"


def _make_project(fixture: Fixture) -> None:
    shutil.rmtree(fixture.project.parent, ignore_errors=True)
    fixture.project.mkdir(parents=True)
    for relative, content in fixture.files.items():
        target = fixture.project / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    for command in fixture.setup:
        env = {**os.environ, **GIT_ENV}
        subprocess.run(command, shell=True, cwd=fixture.project, check=True, env=env)


def _run_session(claude: Path, fixture: Fixture, env: dict[str, str]) -> None:
    """Run Claude Code in the project until every turn has its result."""
    tools = f"{TOOLS},mcp__plugin_mama_mama" if fixture.plugin else TOOLS
    options = ["--allowedTools", tools, "--session-id", fixture.session_id]
    options += ["--plugin-dir", str(ROOT)] if fixture.plugin else []
    if len(fixture.turns) == 1:
        command = [str(claude), "-p", fixture.turns[0][0], *options]
        with tempfile.TemporaryFile("w+") as err:
            try:
                proc = subprocess.run(command, cwd=fixture.project, env=env, text=True,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=err, timeout=TURN_TIMEOUT_S)  # fmt: skip
            except subprocess.TimeoutExpired as exc:
                raise RecordingError(f"claude -p ran over {TURN_TIMEOUT_S} s") from exc
            if proc.returncode != 0:
                err.seek(0)
                raise RecordingError(
                    f"claude -p exited {proc.returncode}\nstdout: {proc.stdout}\n"
                    f"stderr: {err.read()}"
                )
        return
    streaming = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    _run_streaming([str(claude), "-p", *options, *streaming], fixture, env)


def _run_streaming(command: list[str], fixture: Fixture, env: dict[str, str]) -> None:
    """Send the prompts one at a time, each after the previous turn's ``result`` event."""
    with tempfile.TemporaryFile("w+") as err:
        pipe = subprocess.PIPE
        proc = subprocess.Popen(command, cwd=fixture.project, env=env, text=True,
                                stdin=pipe, stdout=pipe, stderr=err)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=read_events, args=(proc.stdout, events), daemon=True).start()
        try:
            for prompt, _ in fixture.turns:
                line = {"type": "user", "message": {"role": "user", "content": prompt}}
                proc.stdin.write(json.dumps(line) + "\n")
                proc.stdin.flush()
                _wait_for_result(events)
            proc.stdin.close()
            proc.wait(timeout=TURN_TIMEOUT_S)
        except (RecordingError, subprocess.TimeoutExpired, OSError) as exc:
            proc.kill()
            proc.wait()
            err.seek(0)
            raise RecordingError(f"claude -p (stream-json): {exc}\nstderr: {err.read()}") from exc
        if proc.returncode != 0:
            err.seek(0)
            raise RecordingError(f"claude -p exited {proc.returncode}\nstderr: {err.read()}")


def _wait_for_result(events: queue.Queue[dict[str, Any] | None]) -> None:
    """The turn's result, or RecordingError (none in time, or the turn ended in an error)."""
    try:
        event = next_result(events, TURN_TIMEOUT_S)
    except MamaError as exc:
        raise RecordingError(str(exc)) from None
    if event.get("is_error"):
        raise RecordingError(f"the turn ended in an error: {event}")


def _tool_errors(transcript: str) -> list[str]:
    """The tool results Claude Code marked ``is_error``, shortened."""
    errors = []
    for line in transcript.splitlines():
        entry = json.loads(line)
        content = entry.get("message", {}).get("content") if entry.get("type") == "user" else None
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        errors += [
            str(b.get("content"))[:200]
            for b in blocks
            if b.get("type") == "tool_result" and b.get("is_error")
        ]
    return errors


def _check(fixture: Fixture, fake: FakeAnthropic, transcript: str, kept: Path) -> None:
    """The recording followed its script: every reply used, none extra, errors as expected."""
    replies = [r.reply for r in fake.requests if r.main]
    if replies != fixture.script:
        fallbacks = sum(r.get("text") == DONE_TEXT for r in replies[len(fixture.script) :])
        raise RecordingError(
            f"{fixture.name}: the model was asked {len(replies)} times for a script of "
            f"{len(fixture.script)} replies ({fallbacks} fallback answers); the session "
            f"did not follow its script, see {kept}"
        )
    errors = _tool_errors(transcript)
    if len(errors) != fixture.expected_errors:
        raise RecordingError(
            f"{fixture.name}: {len(errors)} tool calls failed, {fixture.expected_errors} "
            f"expected: {errors}; see {kept}"
        )


def record(claude: Path, fixture: Fixture, out: Path) -> Path:
    """Record ``fixture`` and write its transcript to ``out/<name>.jsonl``.

    The transcript is also kept next to the project (``/tmp/tx/<name>/transcript.jsonl``),
    so a recording that fails its checks can be looked at.
    """
    _make_project(fixture)
    with tempfile.TemporaryDirectory(prefix="mama-record-home-") as home_dir:
        home = Path(home_dir)
        # A plugin session's MAMA keeps its store apart (in the temporary HOME).
        extra = {"MAMA_HOME": str(home / "mama")} if fixture.plugin else {}
        with FakeAnthropic(fixture.script) as fake:
            _run_session(claude, fixture, claude_env(fake, home, **fixture.env, **extra))
        found = list((home / ".claude" / "projects").glob(f"*/{fixture.session_id}.jsonl"))
        if len(found) != 1:
            raise RecordingError(f"{fixture.name}: expected one transcript, found {found}")
        transcript = found[0].read_text()
        places = [(str(home / "mama"), MAMA_PLACEHOLDER), (str(ROOT), PLUGIN_PLACEHOLDER)]
        places += [(str(home.resolve()), HOME_PLACEHOLDER), (str(home), HOME_PLACEHOLDER)]
        for place, placeholder in places if fixture.plugin else places[2:]:
            transcript = transcript.replace(place, placeholder)
    kept = fixture.project.parent / "transcript.jsonl"
    kept.write_text(transcript)
    _check(fixture, fake, transcript, kept)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{fixture.name}.jsonl"
    target.write_text(transcript)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"fixtures to record (default: {', '.join(FIXTURES)})",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write them")
    parser.add_argument("--claude", help="the Claude Code executable to record with")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in FIXTURES]
    if unknown:
        parser.error(f"unknown fixture {', '.join(unknown)}; known: {', '.join(FIXTURES)}")
    try:
        claude = find_claude(args.claude)
        version = claude_version(claude)
        if version != RECORDED_WITH:
            print(f"note: Claude Code {version}; the fixtures were recorded with {RECORDED_WITH}")
        for name in args.names or FIXTURES:
            started = time.monotonic()
            target = record(claude, FIXTURES[name](), args.out)
            size = target.stat().st_size
            took = time.monotonic() - started
            print(f"{target}: {size:,} bytes, Claude Code {version}, {took:.1f} s")
    except RecordingError as exc:
        print(f"record_transcripts: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
