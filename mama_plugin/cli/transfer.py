"""``mama import`` and ``mama export``: moving memories in and out (through ``transfer/``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import MamaError
from ..home import write_private
from ..project import project_key
from .options import argument, command, flag, json_option, project_option
from .shared import open_store, print_json, project_of


@command("import", "import a MAMA v1.0 database or a MAMA export (backup first)")
@argument("path", nargs="?", help="the v1.0 SQLite file or the JSON export")
@project_option("directory of the project the rows belong to (default: here)")
@flag("--rollback", "restore the backup taken before the last import")
@flag("--force", "roll back even if newer memories would be lost")
@json_option("print the report as JSON")
def cmd_import(args: argparse.Namespace) -> int:
    """Import a file (or roll the last import back) and print what arrived where."""
    from ..transfer import import_file, rollback_last_import

    with open_store(args) as store:
        if args.rollback:
            restored = rollback_last_import(store, force=args.force)
            print(f"restored the database from {restored}")
            return 0
        if not args.path:
            raise MamaError(
                "give the PATH of a MAMA v1.0 database or a MAMA export (or --rollback)"
            )
        report = import_file(store, Path(args.path), project=project_of(args))
    if args.json:
        print_json(report.as_dict())
        return 0
    print(f"imported {report.source} ({report.format}) in {report.seconds * 1000:.0f} ms")
    print(f"backup taken first: {report.backup}  (undo with: mama import --rollback)")
    for table, counts in report.counts.items():
        parts = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "source")
        print(f"  {table:<24} {counts.get('source', 0):>6} rows → {parts}")
    for table, why in report.skipped.items():
        print(f"  {table:<24} skipped: {why}")
    print("verified: every source row is accounted for (0% loss)")
    return 0


@command("export", "a faithful dump: JSON (re-importable) or Markdown")
@argument("--format", choices=("json", "md"), default="json", help="json (default) or md")
@project_option("only this project's directory (default: every project)")
@argument("--output", "-o", help="write to this file instead of standard output")
def cmd_export(args: argparse.Namespace) -> int:
    """Write the JSON dump or the Markdown export to a file or standard output."""
    from ..transfer import export_data, export_markdown

    with open_store(args) as store:
        project = project_key(args.project) if args.project else None
        if args.format == "json":
            text = (
                json.dumps(export_data(store, project=project), indent=2, ensure_ascii=False) + "\n"
            )
        else:
            text = export_markdown(store, project=project)
    if args.output:
        write_private(Path(args.output), text)  # memory is private: 0600 whatever the umask
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
