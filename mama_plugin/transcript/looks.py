"""Whether a shell command only looks around: inspecting is not work, and confirms nothing.

A command line looks when every simple command in it does (split at ``|``, ``||``, ``&&``,
``;`` and newlines outside quotes; leading ``NAME=value`` assignments ignored; no output
redirected into a file): a command of :data:`LOOKS` (``ls``, ``cat``, ``grep``…), a ``git``
subcommand that only reads (``status``, ``log``, ``diff``…; ``branch``, ``remote`` and
``tag`` with options only), ``command -v``, and MAMA's own command (``mama …``, its launcher
``sh …/bin/mama …``): it manages the memory, not the project's work. ``cd x && pytest`` does
work; ``git status && ls`` does not. Standard library only.
"""

from __future__ import annotations

import re

from .shell import pipelines

# Commands that only look around (list, read, search, describe the machine).
LOOKS = frozenset(
    [
        "ls",
        "cat",
        "cd",
        "pwd",
        "echo",
        "head",
        "tail",
        "which",
        "find",
        "grep",
        "rg",
        "wc",
        "tree",
        "file",
        "stat",
        "less",
        "more",
        "date",
        "whoami",
        "uname",
        "env",
        "printenv",
        "type",
        "du",
        "df",
        "id",
        "hostname",
        "ss",
        "netstat",
        "ps",
        "lsof",
        "diff",
        "sort",
        "uniq",
        "cut",
        "jq",
        "nproc",
        "free",
        "uptime",
        "realpath",
        "readlink",
        "dirname",
        "basename",
    ]
)
_GIT_READS = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "shortlog",
        "describe",
        "reflog",
    ]
)
_GIT_LISTS = frozenset(("branch", "remote", "tag"))  # with options only: they list
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRITES = re.compile(r"(?<![0-9&>])>{1,2}\s*(?!&|/dev/null)\S")  # "> file", ">> log", not 2>&1
_FIND_CHANGES = frozenset(("-delete", "-exec", "-execdir", "-ok", "-fprint"))


def only_looks(command: str) -> bool:
    """Whether every simple command of ``command`` only looks around (see the module)."""
    return all(_looks(part) for part in segments(command))


def _looks(part: str) -> bool:
    if _WRITES.search(part):
        return False
    # Quotes never name a command: `sh "${CLAUDE_PLUGIN_ROOT}/bin/mama" config get x`.
    words = [w.strip("\"'") for w in part.split()]
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return True
    head = words[0].rsplit("/", 1)[-1]
    if head in ("sh", "bash") and len(words) > 1:
        head, words = words[1].rsplit("/", 1)[-1], words[1:]  # a launcher: sh …/bin/mama
    if head == "mama":
        return True
    if head == "find":
        return not _FIND_CHANGES & set(words)
    if head in LOOKS:
        return True
    if head == "git":
        rest = [w for w in words[1:] if not w.startswith("-")]
        sub = rest[0] if rest else ""
        return sub in _GIT_READS or (sub in _GIT_LISTS and len(rest) == 1)
    return head == "command" and words[1:2] == ["-v"]


def segments(command: str) -> list[str]:
    """The simple commands of a command line, every stage of every pipeline."""
    return [stage for line in pipelines(command) for stage in line]
