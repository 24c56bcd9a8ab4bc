"""What a session's commands showed, as its checkpoint tells them: where it stopped, the checks
that passed (✅, with their evidence), the failures no later run of the same check made good,
and what the session recorded in memory after its last command.

Read from the transcript's digest (:mod:`mama_plugin.transcript`), never from prose; every
text is masked (:func:`clip`) before it is cut. Standard library only (the Stop hook's path).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from ...privacy import redact_text
from ...transcript import Command, Digest, FileTouch
from ...transcript.verdict import core
from ..render import clip as _clip

_PATH = re.compile(r"/|\.py\b|::")  # a word of a command that names a file, a folder or a test
_LOUDNESS = frozenset(("-q", "-qq", "-v", "-vv", "-s", "--quiet", "--verbose", "--no-header"))
# A check that asks whether a program is installed: exit 1 is its answer, not a failure.
_ASKED = re.compile(r"^(?:command -v|which|type|hash)\s")
# What a command was for, asked as a question ("Check whether a Redis server is running"): when
# its program is not installed (the shell's exit 127), that is the answer, as for `command -v`.
_QUESTION = re.compile(
    r"^(?:(?:check|see|verify|find out|test)\s+(?:whether|if)|(?:is|are|does|do)\s)", re.I
)
_MISSING = "exit 127"
_ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)+")
_DECIDES = frozenset(("save_decision", "evolve_supersede"))
MAX_FAILURES = 8  # failures kept unresolved, the newest


def clip(text: object, limit: int = 300) -> str:
    """``text`` masked first (privacy.redact_text), then cut: a cut secret escapes the mask."""
    return _clip(redact_text(str(text or ""))[0], limit)


def judged(digest: Digest) -> int:
    """How many tool calls the session had made when it last recorded an outcome (0: never)."""
    names = [n.rsplit("__", 1)[-1] for n in digest.tool_names]
    return max((i + 1 for i, n in enumerate(names) if n == "evolve_outcome"), default=0)


def stopped_at(digest: Digest, cwd: str, decisions: Sequence[Any] = ()) -> str:
    """The session's last piece of work, as it was left ("" when it did none).

    A command is told by what ran and what it showed ("I had just run `pytest -q` (run the
    tests): it failed — NameError: …"); its description says what it was for, never stands
    as the subject. When Claude then recorded an outcome or saved a decision (``decisions``:
    the session's, oldest first), the command is no longer where it stopped but what came
    before: "… it failed (exit 1); after it I recorded the outcome and saved dec_…".
    """
    last = digest.last
    if isinstance(last, Command):
        after = _after(digest, last.calls, decisions)
        told = f"I had {'' if after else 'just '}run {ran(last)}: {showed(last)}"
        return told + (f"; after it I {after}" if after else "")
    if isinstance(last, FileTouch):
        return f"I had just {'created' if last.action == 'created' else 'edited'} {last.cite(cwd)}"
    return ""


def ran(command: Command) -> str:
    """ "`pytest -q` (run the tests)": the command, and what it was for when Claude said so."""
    told = f"`{clip(command.command, 120)}`"
    what = command.description.strip()
    if what[:1].isupper() and what[1:2].islower():  # "Run the tests", not "CI" or "PRICE_DB"
        what = what[0].lower() + what[1:]
    return told + (f" ({clip(what, 100)})" if what else "")


def showed(command: Command) -> str:
    """What a command's result showed, in short (Unresolved tells a failure in full): "it
    failed (exit 1)", "it failed (NameError: …)", "it passed (7 passed in 0.20s)"."""
    if command.stopped == "interrupted":
        return "it was interrupted" + (f" ({clip(command.error, 80)})" if command.error else "")
    if command.failed:
        code = command.error.startswith("exit ")  # its exit code, else the line that failed
        line = command.error.split(",", 1)[0] if code else clip(command.error, 80)
        return "it failed" + (f" ({line})" if line else "")
    if command.unknown:
        return "its output does not show whether it passed"
    return f"it passed ({clip(command.shown, 80) if command.shown else 'exit 0'})"


def _after(digest: Digest, calls: int, decisions: Sequence[Any]) -> str:
    """What the session recorded in memory after its tool call number ``calls``: "recorded
    the outcome and saved dec_…" ("" when nothing)."""
    names = {
        n.rsplit("__", 1)[-1]
        for n in digest.tool_names[calls:]
        if n.startswith("mcp__plugin_mama_")
    }
    done = ["recorded the outcome"] if "evolve_outcome" in names else []
    if names & _DECIDES and decisions:
        done.append(f"saved {decisions[-1].id}")
    return " and ".join(done)


def confirmed(commands: list[Command], failing: list[Command]) -> list[dict[str, str]]:
    """Checks that passed (the newest three), each with its evidence: the command, exit 0.

    A command that only looks around (``ls``, ``cat``…) confirms nothing; one that failed
    later is not confirmed; nor is one whose result nothing shows (a pipeline whose status is
    ``tail``'s, a failure swallowed by ``|| true``): it only ran.
    """
    bad = {check_of(c) for c in failing}
    kept: dict[str, dict[str, str]] = {}
    for c in reversed(commands):
        key = check_of(c)
        if c.failed or c.unknown or key in bad or key in kept or c.looks:
            continue
        command = f"`{clip(c.command, 120)}`"
        claim = clip(c.description, 160) if c.description else command
        shown = f": {clip(c.shown, 100)}" if c.shown else ""
        kept[key] = {
            "claim": claim,
            "evidence": (f"{command} exited 0" if c.description else "exited 0") + shown,
        }
    return list(kept.values())[:3][::-1]


def check_of(command: Command) -> str:
    """The check a command runs, whatever it was piped through (:func:`verdict.core`)."""
    return _ASSIGNMENTS.sub("", core(command.command))


def unresolved(commands: list[Command]) -> list[Command]:
    """The failed commands, newest last, that no later passing run made good.

    A later run makes a failure good when it is the same check — spacing and leading
    variable assignments aside: after ``python -m app --check`` failed for want of
    ``PRICE_DB``, ``PRICE_DB=… python -m app --check`` passing settles it — or the same
    program over a part of the tree that holds what failed (:func:`covers`). A command that
    asks whether a program is there (``command -v redis-server`` exiting 1) answered; it
    failed nothing, nor did one asked as a question whose program is not installed
    (``redis-cli ping``, "Check whether a Redis server is running", exit 127).
    """
    later_ok: list[str] = []
    kept: dict[str, Command] = {}
    for command in reversed(commands):
        key = check_of(command)
        if command.unknown:  # a run whose output shows nothing settles nothing, fails nothing
            continue
        if not command.failed:
            later_ok.append(key)
        elif (
            not answered(command) and key not in kept and not any(covers(k, key) for k in later_ok)
        ):
            kept[key] = command
    return list(kept.values())[::-1][-MAX_FAILURES:]


def answered(command: Command) -> bool:
    """Whether a failed command asked a question its failure answers: whether a program is
    there (``command -v``, ``which``…), or what it was for was a question ("Check whether
    Redis is running") and its program is not installed (exit 127)."""
    if _ASKED.match(check_of(command)):
        return True
    return command.error.startswith(_MISSING) and bool(_QUESTION.match(command.description.strip()))


def covers(ran: str, check: str) -> bool:
    """Whether ``ran`` passing shows ``check`` passing too (both :func:`check_of` keys): the
    same check, or the same program (options aside) over paths that hold every path
    ``check`` names — "pytest -q tests" covers "pytest -q tests/test_stats.py::test_empty",
    "pytest" covers both."""
    if ran == check:
        return True
    wide, narrow = _words(ran), _words(check)
    if not wide or not narrow or _options(ran) != _options(check):
        return False
    program = [w for w in narrow if not _PATH.search(w)]
    paths = [w for w in narrow if _PATH.search(w)]
    held = [w for w in wide if w not in program]
    return (
        bool(paths)
        and all(w in wide for w in program)
        and all(any(_under(path, h) for path in paths) for h in held)
    )


def _words(key: str) -> list[str]:
    """A check's words, its options left out ([] when it will not split)."""
    return [w for w in _split(key) if not w.startswith("-")]


def _options(key: str) -> set[str]:
    """A check's options, those that only change how much it prints aside."""
    return {w for w in _split(key) if w.startswith("-") and w not in _LOUDNESS}


def _split(key: str) -> list[str]:
    try:
        return shlex.split(key)
    except ValueError:
        return []


def _under(path: str, held: str) -> bool:
    """Whether ``path`` (a file, a test id) lies within ``held`` (a folder, a file)."""
    held = held.rstrip("/")
    return path == held or path.startswith((f"{held}/", f"{held}::"))


def passed(commands: list[Command], failing: list[Command]) -> list[str]:
    """The checks (:func:`check_of`) that passed and did not fail after (looks aside)."""
    bad = {check_of(c) for c in failing}
    ok = (c for c in commands if not (c.failed or c.unknown or c.looks))
    return list(dict.fromkeys(k for c in ok if (k := check_of(c)) not in bad))
