"""What a shell command's result shows: passed, failed, or not known, and the line that says so.

The exit status alone is not proof. A pipeline's status is its last stage's (``pytest … |
tail -15`` exits 0 whatever pytest said), and a test run can print "2 failed" and exit 0. So
a command failed when it exited non-zero or when its output reports a failure (a count of
failures or errors, a ``FAILED``/``ERROR`` line, a traceback, an exception line); it passed
when it exited 0 and nothing in the status could hide a failure, or when a pipeline's output
itself shows the pass ("5 passed", "OK"); otherwise it only ran. The line told is the
failure's own (``NameError: name 'STATS' is not defined``), never a progress bar, or the
line that shows the pass ("7 passed in 0.20s"). A command that was stopped before it ended
(a timeout, the user's interrupt) was ``interrupted``; one Claude Code refused to start (a
permission not granted, a blocked path, the user's "no") was ``not run``: neither is a pass.

Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .shell import pipelines

PASSED, FAILED, UNKNOWN = "passed", "failed", "unknown"
INTERRUPTED, NOT_RUN = "interrupted", "not run"

_EXIT = re.compile(r"^(?:Error: )?Exit code (\d+)$")
_SHELL_PREFIX = re.compile(r"^/bin/(?:ba|z)?sh: (?:line \d+: )?")
# Output that reports a failure, whatever the exit status.
_COUNT = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b", re.I)
_FAILED_LINE = re.compile(r"^(?:FAILED|FAIL:|ERROR:?)(?:\s|\(|$)|^make(?:\[\d+\])?: \*\*\* ")
_HEADER = re.compile(r"^=+ (?:FAILURES|ERRORS) =+$")  # pytest's, before the failures' details
# pytest's progress line with a failure or an error in it ("..FF.   [ 80%]"): a run cut
# by ``| head`` may show nothing else.
_PROGRESS = re.compile(r"^(?:\S+\.py )?[.sxXE]*[FE][.sxXFE]*(?:\s+\[\s*\d+%\])?$")
# Claude Code's answer for a command it moved to the background: it has only started.
_BACKGROUND = re.compile(r"^Command running in background with ID")
_EXCEPTION = re.compile(r"^(?:E\s+)?((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b:?.*)$")
_TRACEBACK = "Traceback (most recent call last)"
# Claude Code's own answer when it stopped a command, or never started it (2.1.197).
_STOPPED = re.compile(r"^Command timed out after|^\[Request interrupted by user")
_REFUSED = re.compile(
    r"haven't granted it yet|doesn't want to proceed with this tool use|tool use was rejected"
    r"|\bwas blocked\. For security|Approve only if you trust it|^Permission to use \w+ "
    r"(?:has been|was) denied"
)
# A failure swallowed: the command's status is always 0.
_SWALLOWED = re.compile(r"\|\|\s*(?:true|:)(?:\s|;|$)")
# Output that shows a pass on its own (a test runner's summary).
_PASS = re.compile(r"\b[1-9]\d* passed\b|^OK(?: \(|$)|^All checks passed")
# A pipeline's last stage that decides its status and hides the first's.
_FILTERS = frozenset(
    [
        "tail",
        "head",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "sort",
        "uniq",
        "wc",
        "less",
        "more",
        "cat",
        "tee",
        "cut",
        "sed",
        "awk",
        "column",
        "jq",
        "tr",
        "nl",
    ]
)


@dataclass(frozen=True)
class Verdict:
    """A command's result: ``passed``, ``failed``, ``unknown``, ``interrupted`` or ``not run``,
    with the line that tells it ("exit 1, NameError: …" for a failure, "7 passed" for a pass
    whose output shows it)."""

    state: str
    line: str = ""


def verdict(command: str, is_error: bool, output: str, *, read_output: bool = True) -> Verdict:
    """What ``command``'s result shows (``read_output``: look for a failure in its output)."""
    lines = [_SHELL_PREFIX.sub("", line.strip()) for line in output.splitlines()]
    code = next((m.group(1) for line in lines if (m := _EXIT.match(line))), "")
    said = [line for line in lines if line and not _EXIT.match(line)]
    told = _failure_line(said) if read_output or is_error else ""
    if is_error and (stop := next((x for x in said if _STOPPED.match(x)), "")):
        return Verdict(INTERRUPTED, _joined(stop))
    if is_error and not code and (refused := next((x for x in said if _REFUSED.search(x)), "")):
        return Verdict(NOT_RUN, _joined(refused))
    if is_error:
        return Verdict(
            FAILED, _joined(f"exit {code}" if code else "", told or next(iter(said), ""))
        )
    if read_output and (told or _TRACEBACK in output):
        return Verdict(FAILED, _joined(told or _TRACEBACK))
    progress = next((x for x in said if _PROGRESS.match(x)), "")
    if read_output and (progress or any(_HEADER.match(x) for x in said)):
        shown = " ".join(progress.split()) if progress else "pytest printed its FAILURES"
        return Verdict(FAILED, _joined(f"tests failed: {shown}"))
    if started := next((x for x in said if _BACKGROUND.match(x)), ""):
        return Verdict(UNKNOWN, _joined(started))
    # The line that shows the pass, as told ("7 passed in 0.20s", not pytest's "=" rule).
    shown = next((x.strip("= ") for x in said[::-1] if _PASS.search(x)), "")
    if masked(command) and not shown:
        return Verdict(UNKNOWN)
    return Verdict(PASSED, _joined(shown))


def _failure_line(lines: list[str]) -> str:
    """The line that says what failed: an exception's own line first, else the first line
    that reports failures ("2 failed, 3 passed", "FAILED tests/…")."""
    for line in lines:
        # pytest's short summary: "FAILED tests/test_x.py::test_y - NameError: …"
        summary = _FAILED_LINE.match(line) and " - " in line
        found = _EXCEPTION.match(line.split(" - ", 1)[1] if summary else line)
        if found:
            return found.group(1)
    told = next((line for line in lines if _COUNT.search(line) or _FAILED_LINE.match(line)), "")
    return _whole(told, lines)


# pytest cuts a short summary line to the terminal's width (80 columns without a terminal):
# "… - Failed: DID NO...".
_CUT_SUMMARY = re.compile(r"^(.* - )(.+?)\.\.\.$")
_TERMINAL = 80


def _whole(line: str, lines: list[str]) -> str:
    """``line`` with the message pytest cut in its short summary restored from the failure's
    own ``E`` line in that test's section ("Failed: DID NOT RAISE ValueError"), else without
    the word it cut; a line shorter than the terminal is not cut, and is told as it is."""
    cut = _CUT_SUMMARY.match(line)
    if cut is None or len(line) < _TERMINAL:
        return line
    head, message = cut.groups()
    test = ".".join(head.removesuffix(" - ").split("::")[1:]).strip()  # TestShip.test_below
    section = next(
        (i for i, x in enumerate(lines) if test and x.startswith("_") and f" {test} " in x), None
    )
    full = ""
    for x in lines[section + 1 :] if section is not None else []:
        if x.startswith(("___", "===")):  # the next test's section, or the summary
            break
        if x.startswith("E ") and x[1:].strip().startswith(message):
            full = x[1:].strip()
            break
    return head + full if full else head + message.rsplit(" ", 1)[0] + "…"


def _joined(*parts: str) -> str:
    """The parts on one line, cut at a word's end past 160 characters."""
    text = ", ".join(p for p in parts if p)
    if len(text) <= 160:
        return text
    cut = text[:159]
    space = cut.rfind(" ")
    return (cut[:space] if space >= 106 else cut).rstrip(" ,;:") + "…"


def masked(command: str) -> bool:
    """Whether ``command``'s status hides its first command's: a pipeline ending in a filter
    (``| tail``, ``| grep``…) without ``pipefail``, or a failure swallowed (``|| true``)."""
    if _SWALLOWED.search(command):
        return True
    if "pipefail" in command:
        return False
    # ``… | grep -q X`` too: Claude Code reports grep's "no match" (exit 1) as no error, and
    # ``-q`` prints nothing, so the transcript cannot tell a match from none.
    return bool(_filter_stage(command))


def _filter_stage(command: str) -> str:
    """The last stage of ``command``'s last pipeline when it is a filter (``tail -15``), else
    "": the stage whose status the pipeline's is, and which hides the first's."""
    last = (pipelines(command) or [[]])[-1]
    words = last[-1].split() if len(last) > 1 else []
    return last[-1] if words and words[0] in _FILTERS else ""


_STDERR = re.compile(r"\s*2>&1\s*$")


def core(command: str) -> str:
    """``command`` as the check it runs: without the filters it was piped through, a swallowed
    failure or stderr folded in (``pytest -q 2>&1 | tail -15`` → ``pytest -q``), so that one
    run of it can make good another's failure."""
    text = " ".join(command.split())
    while True:
        before = text
        text = _SWALLOWED.sub("", text).rstrip()
        stage = _filter_stage(text)
        rest = text[: len(text) - len(stage)].rstrip() if stage and text.endswith(stage) else ""
        if rest.endswith("|") and not rest.endswith("||"):
            text = rest[:-1].rstrip()
        text = _STDERR.sub("", text)
        if text == before:
            return text
