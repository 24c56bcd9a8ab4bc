"""``mama promote``: a memory every project inherits (the global scope), or back to one."""

from __future__ import annotations

import argparse

from .options import argument, command, json_option, project_option
from .shared import open_store, print_json, project_of


@command("promote", "make a memory global: every project's search and session start read it")
@argument("id", help="memory id")
@argument("--back", action="store_true", help="return a global memory to the project instead")
@project_option("with --back: the project it returns to (default: here)")
@json_option()
def cmd_promote(args: argparse.Namespace) -> int:
    """Promote a project's decision, insight or context to global, or (``--back``) return it."""
    from ..services.scopes import demote, promote

    with open_store(args) as store:
        moved = demote(store, args.id, project_of(args)) if args.back else promote(store, args.id)
    if args.json:
        print_json(moved.as_dict())
    else:
        print(moved.summary())
    return 0
