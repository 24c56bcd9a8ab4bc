"""``mama promote``: a memory every project inherits (the global scope), or back to one."""

from __future__ import annotations

import argparse

from .options import argument, command, flag, json_option, project_option
from .shared import open_store, print_json, project_of, told


@command("promote", "make a memory global: every project's search and session start read it")
@argument("id", nargs="?", help="memory id")
@flag("--back", "return a global memory to the project instead")
@flag(
    "--suggest", "list what several projects say alike (near-duplicates across projects) to promote"
)
@project_option("with --back: the project it returns to (default: here)")
@json_option()
def cmd_promote(args: argparse.Namespace) -> int:
    """Promote a project's decision, insight or context to global, or (``--back``) return it."""
    from ..errors import ValidationError
    from ..services.saving.scopes import demote, promote, seen_across

    if args.suggest == bool(args.id):
        raise ValidationError(["give the id of a memory to promote, or --suggest (not both)"])
    with open_store(args) as store:
        if args.suggest:
            found = seen_across(store)
            if args.json:
                print_json(
                    [{"ids": [m.id for m in p.memories], "projects": p.projects} for p in found]
                )
            else:
                said = "\n".join(p.summary() for p in found)
                print(said or "Nothing is said alike in two projects.")
            return 0
        moved = demote(store, args.id, project_of(args)) if args.back else promote(store, args.id)
    return told(args, moved.as_dict(), moved.summary())
