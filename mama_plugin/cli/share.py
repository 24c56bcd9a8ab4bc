"""``mama share``: the project's decisions as files in the repository's ``.mama/`` (through
``share/``), read back after a pull, checked for secrets in CI, conflicts shown and settled."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import MamaError
from .options import argument, command, flag, json_option, keyword_only_option, project_option
from .shared import open_store, optional_embedder, print_json, project_of


@command(
    "share",
    "write the project's decisions, insights and links to .mama/ in the repository, reading "
    "teammates' changes there first",
)
@project_option("a directory of the repository (default: here)")
@flag(
    "--import",
    "only read .mama/ into this clone's memory: new files, edits, tombstones",
    dest="import_only",
)
@flag(
    "--check",
    "exit 1 when a file in .mama/ looks like it carries a secret or cannot be read "
    "(for CI; needs no database)",
)
@flag("--checkpoints", "share checkpoints too, rolling ones included")
@flag("--conflicts", "show each open conflict with both versions")
@argument("--resolve", metavar="ID", help="settle the conflict of memory ID (with --keep)")
@argument(
    "--keep",
    choices=("mine", "theirs"),
    help="with --resolve: keep this clone's version, or take the one in .mama/",
)
@keyword_only_option()
@json_option("print the report as JSON")
def cmd_share(args: argparse.Namespace) -> int:
    """Share, import, check, or show and settle conflicts; exit 1 on a problem or a finding."""
    from ..share.scan import checkout_root

    root = checkout_root(args.project or os.getcwd())
    if root is None:
        raise MamaError(
            f"{args.project or os.getcwd()} is not in a git repository: .mama/ lives at the root "
            "of the repository the team shares"
        )
    if args.check:
        return _check(args, root)
    if bool(args.resolve) != bool(args.keep):
        raise MamaError("--resolve ID and --keep mine|theirs go together")
    from ..share.sync import Sharing

    with open_store(args) as store:
        sharing = Sharing(store, args.config, project_of(args), root)
        if args.conflicts:
            return _show_conflicts(args, sharing)
        if args.resolve:
            print(sharing.resolve(args.resolve, args.keep))
            sharing.stamp()
            return 0
        report = (
            sharing.import_files()
            if args.import_only
            else sharing.share(checkpoints=args.checkpoints)
        )
        sharing.stamp()
        if report.imported or report.updated:
            embedder = optional_embedder(args, without="the MAMA server embeds them later")
            if embedder is not None:
                from ..services.search.indexing import drain

                report.embedded = drain(store, embedder)
    if args.json:
        print_json(report.as_dict())
    else:
        for line in report.lines():
            print(line)
    return 1 if report.problems or report.withheld else 0


def _check(args: argparse.Namespace, root: Path) -> int:
    from ..share.check import check_folder

    personal = not args.config.settings.keep_personal_data
    count, findings = check_folder(root, personal=personal)
    if args.json:
        print_json({"checked": count, "findings": [str(f) for f in findings]})
    else:
        for finding in findings:
            print(finding, file=sys.stderr)
        verdict = f"{len(findings)} finding(s)" if findings else "nothing looks secret"
        print(f"checked {count} files in {root / '.mama'}: {verdict}")
    return 1 if findings else 0


def _show_conflicts(args: argparse.Namespace, sharing: object) -> int:
    from ..share.sync import Sharing

    assert isinstance(sharing, Sharing)
    found = sharing.state.conflicts(sharing.project)
    if args.json:
        print_json([c.as_dict() for c in found])
        return 0
    if not found:
        print("no open conflicts")
        return 0
    for c in found:
        print(f"=== {c.memory_id} ({c.path}): changed here and by a teammate since the last share")
        print("--- theirs (the file in .mama/):")
        print(c.theirs.rstrip("\n"))
        print("--- mine (this clone's memory):")
        print(c.mine.rstrip("\n") if c.mine else "(forgotten here)")
        print(
            f"settle it: mama share --resolve {c.memory_id} --keep mine   or   "
            f"mama share --resolve {c.memory_id} --keep theirs"
        )
    return 0
