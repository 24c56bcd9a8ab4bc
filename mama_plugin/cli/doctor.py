"""``mama doctor``: check the database for damage (and whether it can be written), list the
backups, restore one."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Config
from ..errors import MamaError
from ..home import unwritable
from .options import argument, command


@command("doctor", "check the database for damage; --restore puts back the newest good backup")
@argument(
    "--restore",
    nargs="?",
    const="",
    metavar="BACKUP",
    help="set the damaged database aside and restore BACKUP (default: the newest good one)",
)
def cmd_doctor(args: argparse.Namespace) -> int:
    """Print what ``PRAGMA integrity_check`` finds and the backups; restore with --restore.

    Exit status 0 when the database is sound (or was restored), 1 when it is damaged.
    """
    from ..storage.backup import backups
    from ..storage.integrity import check_file

    db = Path(args.db) if args.db else args.config.db_path
    if not db.exists():
        print(f"database   {db} does not exist yet (MAMA creates it on the first save)")
        return 0
    print(f"database   {db} ({db.stat().st_size / 1e6:.1f} MB)")
    if why := unwritable(db.parent):
        print(
            f"writable   no ({why}): MAMA reads it but saves nothing; make {db.parent} "
            "writable to save again"
        )
    problems = check_file(db, full=True)
    _print_problems(problems)
    found = backups(db)
    print(f"backups    {len(found)} in {db.parent / 'backups'}" + (":" if found else ""))
    for backup in found:
        size = backup.path.stat().st_size / 1e6
        print(f"           {backup.path.name}  taken {backup.when}  ({size:.1f} MB)")
    if args.restore is not None:
        return _restore(db, args.restore, args.config, damaged=bool(problems))
    if not problems:
        return 0
    if found:
        print(
            f"to repair  run `mama doctor --restore` to put back {found[0].path.name} "
            f"(taken {found[0].when}); the damaged file is copied to {db.parent / 'damaged'} "
            "first. Memories saved since that backup are not in it."
        )
    else:
        print(
            "to repair  there is no backup to restore. To start again with an empty store, "
            f"move the file away (MAMA then creates a new one): mv {db} {db}.damaged"
        )
    return 1


def _print_problems(problems: list[str]) -> None:
    if not problems:
        print("integrity  ok (PRAGMA quick_check and integrity_check)")
        return
    print(f"integrity  DAMAGED: SQLite's integrity check found {len(problems)} problem(s):")
    for line in problems[:10]:
        print(f"           {line}")
    if len(problems) > 10:
        print(f"           … and {len(problems) - 10} more")


def _restore(db: Path, wanted: str, config: Config, *, damaged: bool) -> int:
    """Set ``db`` aside and restore the chosen backup in its place; print what was done."""
    from ..storage import Store
    from ..storage.backup import forget_vectors, restore_file, set_aside

    if not damaged and not wanted:
        raise MamaError(
            f"{db} is sound: nothing to restore (name a backup to go back to it anyway: "
            "`mama doctor --restore BACKUP`)"
        )
    chosen = _choose(db, wanted)
    aside = set_aside(db)
    print(f"set aside  {db} → {aside} (kept; delete it yourself once you no longer need it)")
    in_place = restore_file(db, chosen)
    with Store.open(db, config=config, check="quick") as store:
        forget_vectors(store)
        count = store.memories.counts()["memories"]
    print(f"restored   {chosen} → {db}: quick_check ok, {count} memories")
    if not in_place:
        print(
            "note       the file was replaced: restart running Claude Code sessions "
            "(or reconnect MAMA with /mcp) so they open the restored database"
        )
    return 0


def _choose(db: Path, wanted: str) -> Path:
    """The backup to restore: ``wanted`` (a path or a name in ``backups/``), else the newest.

    Only a backup that checks sound is chosen.
    """
    from ..storage.backup import backups
    from ..storage.integrity import check_file

    if wanted:
        chosen = Path(wanted).expanduser()
        if not chosen.is_file() and (db.parent / "backups" / wanted).is_file():
            chosen = db.parent / "backups" / wanted
        if not chosen.is_file():
            raise MamaError(f"no backup file {wanted}: `mama doctor` lists the backups")
        if problems := check_file(chosen):
            raise MamaError(f"the backup {chosen} is damaged too ({problems[0]}); choose another")
        return chosen
    for backup in backups(db):
        if problems := check_file(backup.path):
            print(f"skipped    {backup.path.name}: damaged too ({problems[0]})")
            continue
        return backup.path
    raise MamaError(
        f"there is no sound backup of {db} to restore; the damaged file is left as it is"
    )
