"""``mama gc``: fold old rolling checkpoints, cap the backups, give free pages back."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .options import command, flag, json_option
from .shared import open_store, print_json

if TYPE_CHECKING:
    from ..services.hygiene.gc import Plan


@command(
    "gc",
    "fold a session's old rolling checkpoints into one, delete the backups beyond their caps "
    "and rewrite the database when that gives back space",
)
@flag("--dry-run", "list what gc would remove and change nothing")
@json_option()
def cmd_gc(args: argparse.Namespace) -> int:
    """Print what gc would remove (``--dry-run``) or what it removed."""
    from ..services.hygiene import gc

    settings = args.config.settings
    with open_store(args) as store:
        if args.dry_run:
            found = gc.plan(store, settings)
            if args.json:
                print_json(found.as_dict())
            else:
                print_plan(found, horizon_days=settings.checkpoint_horizon_days)
            return 0
        done = gc.collect(store, settings)
    if args.json:
        print_json(done.as_dict())
        return 0
    print(f"folded     {done.folded} rolling checkpoints into {done.sessions} sessions' one")
    print(f"dropped    {done.trivial} checkpoints of sessions that did nothing")
    print(f"backups    {len(done.backups)} deleted ({mb(done.backup_bytes)})")
    rewrite = "not needed" if done.vacuum_s is None else f"took {done.vacuum_s * 1000:.0f} ms"
    print(f"rewrite    {rewrite}")
    print(f"database   {mb(done.bytes_before)} -> {mb(done.bytes_after)}")
    return 0


def print_plan(found: Plan, *, horizon_days: int) -> None:
    """What gc would remove, one line each, then what it would give back."""
    print(
        f"checkpoints  {found.folded} rolling checkpoints of {len(found.folds)} sessions older "
        f"than {horizon_days} days would be folded into each session's newest"
    )
    for f in found.folds:
        print(f"  {f.session_id}  keep {f.kept}  fold {', '.join(f.folded)}  ({f.project})")
    print(
        f"trivial      {len(found.trivial)} checkpoints of sessions older than {horizon_days} "
        'days that did nothing ("hello") would be dropped'
    )
    print(f"backups      {len(found.backups)} beyond the caps would be deleted")
    for backup, size in found.backups:
        print(f"  {backup.path.name}  taken {backup.when}  ({mb(size)})")
    s = found.space
    rewrite = "would" if found.vacuum else "would not"
    print(f"rewrite      {rewrite} run ({mb(s.free_bytes)} free of {mb(s.file_bytes)})")
    print(f"frees        about {mb(found.frees)}")


def mb(n: int) -> str:
    """Bytes as a person reads them: ``1.2 MB``."""
    return f"{n / 1e6:.1f} MB"
