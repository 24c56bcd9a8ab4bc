"""The ``mama`` command line. Thin: parse arguments, call a service, print.

Errors from MAMA become one ``mama: error: …`` line and exit code 1; usage errors exit 2.
Nothing else prints a traceback: an unexpected error is one line naming the log file its
traceback went to (``$MAMA_HOME/logs/cli.log``), exit code 1. A reader that stops reading early
(``mama status | head -1``) ends the command quietly with status 141, as it ends ``cat``.
Each command lives with its kin (memory, forgetting, scopes, share, transfer, settings, runtime,
assist, doctor, gc, catchup) and declares its arguments with the shared decorators of ``options``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from ..config import Config, mama_home
from ..errors import MamaError
from ..home import keep_private
from . import (
    assist,
    catchup,
    doctor,
    enrich,
    forgetting,
    gc,
    graph,
    learning,
    link,
    memory,
    runtime,
    scopes,
    settings,
    share,
    team,
    transfer,
    view,
)
from .failure import unexpected
from .options import Command

__all__ = ["build_parser", "main"]

# In the order ``mama --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    runtime.cmd_demo,
    memory.cmd_status,
    memory.cmd_show,
    memory.cmd_search,
    forgetting.cmd_edit,
    forgetting.cmd_forget,
    forgetting.cmd_redact,
    scopes.cmd_promote,
    memory.cmd_verify,
    transfer.cmd_import,
    transfer.cmd_export,
    runtime.cmd_serve,
    runtime.cmd_models,
    runtime.cmd_reindex,
    doctor.cmd_doctor,
    gc.cmd_gc,
    assist.cmd_draft,
    assist.cmd_links,
    assist.cmd_stats,
    settings.cmd_config,
    settings.cmd_commands,
    runtime.cmd_hook,
    catchup.cmd_catchup,
    share.cmd_share,
    learning.cmd_confidence,
    learning.cmd_learn,
    learning.cmd_decay,
    learning.cmd_hubs,
    learning.cmd_learned,
    learning.cmd_context,
    learning.cmd_premises,
    view.cmd_view,
    team.cmd_team,
    graph.cmd_graph,
    learning.cmd_evolve,
    link.cmd_link,
    enrich.cmd_enrich,
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used by the docs test)."""
    parser = argparse.ArgumentParser(
        prog="mama", description="MAMA: a memory of decisions for Claude Code."
    )
    parser.add_argument(
        "--db", help="database file (default: the configured one, $MAMA_HOME/mama.db)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(sub)
    return parser


# The status of a command whose reader closed the pipe early: 128 + SIGPIPE, what the shell
# reports for cat, grep or git ended by the signal. Not 0 (the output was cut short, and a
# script under `set -o pipefail` sees the same as with those tools), not 1 (mama's own errors).
BROKEN_PIPE_STATUS = 141

# Processes with a composition root of their own, which reads the config leniently: a typo in
# config.json must not take memory away from a session.
_OWN_ROOT = frozenset({"serve", "hook", "catchup"})


def _config(command: str) -> Config | None:
    """The command's one Config, read strictly: a bad value stops it with the fix to make.

    ``mama config`` only reads the file it edits (so it can repair a bad value); ``serve``,
    ``hook`` and ``catchup`` (run unattended) build their own.
    """
    if command in _OWN_ROOT:
        return None
    config = Config()
    if command != "config":
        _ = config.settings  # every key parsed now, so no command fails halfway
    return config


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mama`` command."""
    try:
        try:
            return _run(argv)
        finally:  # also after --help or a usage error, which leave through SystemExit
            sys.stdout.flush()  # a reader gone early is met here, not in the interpreter's exit
    except BrokenPipeError:
        return reader_gone()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "config":
        settings.check_config_args(parser, args)
    keep_private(mama_home())  # new files 0600; an install made before that put right
    try:
        args.config = _config(args.command)
        return int(args.handler(args))
    except BrokenPipeError:
        raise  # stdout's reader left: not an error of the command's (main ends quietly)
    except MamaError as exc:
        print(f"mama: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug or the environment: one line, the traceback to a log
        print(f"mama: error: {unexpected(exc, args)}", file=sys.stderr)
        return 1


def reader_gone() -> int:
    """End quietly when stdout's reader has closed it (the Python docs' recipe, ``signal``).

    What is still buffered has nowhere to go: stdout is pointed at /dev/null, so the
    interpreter's last flush at exit cannot raise again and print its own traceback.
    """
    with contextlib.suppress(OSError, ValueError):  # ValueError: stdout has no descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return BROKEN_PIPE_STATUS
