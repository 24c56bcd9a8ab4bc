"""``mama doctor``: check the database for damage (and whether it can be written), list the
backups; rebuild what the memories derive (``--repair``), keep what can be read of damaged
memories (``--salvage``) or restore a backup (``--restore``)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..bootstrap.launcher import mama_command
from ..config import Config
from ..errors import MamaError
from ..home import unwritable
from .options import argument, command, flag
from .shared import optional_embedder

if TYPE_CHECKING:
    from ..storage.backup import Backup


@command(
    "doctor",
    "check the database for damage and list the backups; --repair rebuilds a damaged search "
    "index from the memories, --salvage keeps what can be read of damaged memories, "
    "--restore puts back a backup",
)
@flag(
    "--repair",
    "when only what MAMA derives from the memories is damaged (the vectors, the full-text "
    "index, an index): set the file aside, rebuild that from the memories and re-embed them; "
    "every memory and link is kept",
)
@flag(
    "--salvage",
    "when the memories themselves are damaged: set the file aside and keep every row SQLite "
    "can still read of it (the rows in damaged pages are lost; for damage no backup holds)",
)
@argument(
    "--restore",
    nargs="?",
    const="",
    metavar="BACKUP",
    help="set the damaged database aside and restore BACKUP (default: the newest good one)",
)
def cmd_doctor(args: argparse.Namespace) -> int:
    """Print what the checks find and the backups; repair or restore when asked.

    Exit status 0 when the database is sound (or was repaired or restored), 1 when damaged.
    """
    from ..storage.diagnosis import examine, listed

    db = Path(args.db) if args.db else args.config.db_path
    if sum((args.repair, args.salvage, args.restore is not None)) > 1:
        raise MamaError(
            "--repair, --salvage and --restore do different things: choose one (`mama doctor` "
            "alone says which the damage needs)"
        )
    if not db.exists():
        print(f"database   {db} does not exist yet (MAMA creates it on the first save)")
        _print_backups(db, args.config.settings.backups_max_count)
        if args.restore is None:
            return 0
        return _restore(db, args.restore, args.config, damaged=True)
    print(f"database   {db} ({db.stat().st_size / 1e6:.1f} MB)")
    if why := unwritable(db.parent):
        print(
            f"writable   no ({why}): MAMA reads it but saves nothing; make {db.parent} "
            "writable to save again"
        )
    findings = examine(db, full=True)
    _print_problems(findings.problems, findings.derived)
    found = _print_backups(db, args.config.settings.backups_max_count)
    if args.repair:
        return _repair(db, findings.problems, findings.derived, args)
    if args.salvage:
        return _salvage(db, findings.problems, findings.derived, args)
    if args.restore is not None:
        return _restore(db, args.restore, args.config, damaged=bool(findings.problems))
    if not findings.problems:
        return 0
    mama = mama_command()
    if findings.derived:
        print(
            f"to repair  run `{mama} doctor --repair`: it copies the damaged file to "
            f"{db.parent / 'damaged'}, rebuilds {listed(findings.derived)} from the memories "
            "and embeds every memory again; every memory and link is kept"
        )
    elif found:
        print(
            f"to repair  run `{mama} doctor --restore` to put back {found[0].path.name} "
            f"(taken {found[0].when}); the damaged file is copied to {db.parent / 'damaged'} "
            "first. Memories saved since that backup are not in it: `"
            f"{mama} doctor --salvage` keeps instead every row SQLite can still read of this "
            "file (the rows in its damaged pages are lost)."
        )
    else:
        print(
            f"to repair  there is no backup to restore: run `{mama} doctor --salvage` to keep "
            "every row SQLite can still read (the rows in its damaged pages are lost; the "
            f"damaged file is copied to {db.parent / 'damaged'} first)"
        )
    return 1


def _print_problems(problems: list[str], derived: tuple[str, ...]) -> None:
    from ..storage.diagnosis import listed

    if not problems:
        print("integrity  ok (PRAGMA quick_check and integrity_check, the vectors read)")
        return
    print(f"integrity  DAMAGED: SQLite's integrity check found {len(problems)} problem(s):")
    for line in problems[:10]:
        print(f"           {line}")
    if len(problems) > 10:
        print(f"           … and {len(problems) - 10} more")
    if derived:
        print(
            f"damaged    only {listed(derived)}, which MAMA rebuilds from the memories; every "
            "memory and link reads sound"
        )
    else:
        print("damaged    the memories or links themselves (or the file's structure)")


def _print_backups(db: Path, keep: int) -> list[Backup]:
    """List the backups of ``db``, newest first, each checked (a torn or damaged one is said
    so); the list. ``keep``: how many automatic ones the server keeps (``backups_max_count``)."""
    from ..storage.backup import backups, problem_of

    found = backups(db)
    print(f"backups    {len(found)} in {db.parent / 'backups'}" + (":" if found else ""))
    for backup in found:
        try:
            size = f"{backup.path.stat().st_size / 1e6:.1f} MB"
        except OSError as exc:
            size = f"cannot be read: {exc.strerror or exc}"
        kind = "  automatic" if backup.automatic else ""
        if problem := problem_of(backup):
            kind += f"  DAMAGED ({problem}): never restored"
        print(f"           {backup.path.name}  taken {backup.when}  ({size}){kind}")
    if not any(backup.automatic for backup in found):
        print(
            f"           (MAMA's server takes one a day, keeping the newest {keep}; "
            "`mama import` one before each import)"
        )
    return found


def _repair(
    db: Path, problems: list[str], derived: tuple[str, ...], args: argparse.Namespace
) -> int:
    """Rebuild the derived tables from the memories, then embed them; print what was done."""
    from ..storage.diagnosis import listed
    from ..storage.repair import rebuild

    mama = mama_command()
    if not problems:
        raise MamaError(
            f"{db} is sound: nothing to repair (`{mama} reindex --all` re-embeds every memory)"
        )
    if not derived:
        raise MamaError(
            f"the memories or links of {db} are damaged, not only what MAMA derives from them: "
            f"a rebuild cannot bring them back. `{mama} doctor --restore` puts back the newest "
            f"sound backup (listed above); `{mama} doctor --salvage` keeps every row SQLite can "
            "still read"
        )
    rebuilt = rebuild(db, embedding_dim=args.config.settings.embedding_dim)
    print(f"set aside  {db} → {rebuilt.aside} (kept; delete it once you no longer need it)")
    print(
        f"rebuilt    {listed(derived)} from the memories: {rebuilt.memories} memories and "
        f"{rebuilt.links} links kept"
    )
    _embed_again(db, rebuilt.in_place, args)
    return 0


def _salvage(
    db: Path, problems: list[str], derived: tuple[str, ...], args: argparse.Namespace
) -> int:
    """Keep every row SQLite can read of a damaged file, then embed them; print what was done."""
    from ..storage.repair import rebuild

    mama = mama_command()
    if not problems:
        raise MamaError(f"{db} is sound: nothing to salvage")
    if derived:
        raise MamaError(
            f"only what MAMA derives from the memories is damaged in {db}: `{mama} doctor "
            "--repair` rebuilds it and keeps every memory and link (a salvage would too, with "
            "more reading)"
        )
    saved = rebuild(db, embedding_dim=args.config.settings.embedding_dim, salvage=True)
    print(f"set aside  {db} → {saved.aside} (kept; delete it once you no longer need it)")
    print(
        f"salvaged   {saved.memories} memories and {saved.links} links: every row SQLite "
        "could read; the full-text index and the vectors rebuilt from them"
    )
    for gap in saved.gaps:
        print(f"lost       {gap.told()} (in damaged pages)")
    if saved.dropped:
        print(f"dropped    {saved.dropped} rows whose memory or link was lost")
    _embed_again(db, saved.in_place, args)
    return 0


def _embed_again(db: Path, in_place: bool, args: argparse.Namespace) -> None:
    """Embed the memories of a rebuilt ``db`` (or say the server will); say to restart
    sessions when the file was replaced rather than copied into."""
    from ..services.search.indexing import reindex
    from ..storage import Store

    mama = mama_command()
    with Store.open(db, config=args.config, check="quick") as store:
        embedder = optional_embedder(
            args, without="the vectors are rebuilt when MAMA's server next runs"
        )
        if embedder is not None:
            started = time.perf_counter()
            count = reindex(store, embedder)
            print(
                f"embedded   {count} memories with {embedder.name} in "
                f"{time.perf_counter() - started:.1f} s"
            )
        else:
            waiting = store.vectors.count_pending()
            print(
                f"vectors    {waiting} memories wait for their vector: MAMA's server embeds "
                f"them in the background (or run `{mama} reindex`)"
            )
    if not in_place:
        print(
            "note       the file was replaced: restart running Claude Code sessions "
            "(or reconnect MAMA with /mcp) so they open the repaired database"
        )


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
    if db.exists():
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

    Only a backup that can be read and checks sound is chosen.
    """
    from ..storage.backup import backups
    from ..storage.diagnosis import check_file

    if wanted:
        chosen = Path(wanted).expanduser()
        if not chosen.is_file() and (db.parent / "backups" / wanted).is_file():
            chosen = db.parent / "backups" / wanted
        if not chosen.is_file():
            raise MamaError(
                f"no backup file {wanted}: name one that `mama doctor` lists (or a path to one)"
            )
        if not os.access(chosen, os.R_OK):
            raise MamaError(
                f"the backup {chosen} cannot be read (permission denied): make it readable "
                f"(`chmod u+r {chosen}`) or choose another"
            )
        if problems := check_file(chosen):
            raise MamaError(f"the backup {chosen} is damaged too ({problems[0]}); choose another")
        return chosen
    for backup in backups(db):
        if not os.access(backup.path, os.R_OK):
            print(f"skipped    {backup.path.name}: cannot be read (permission denied)")
            continue
        if problems := check_file(backup.path):
            print(f"skipped    {backup.path.name}: damaged too ({problems[0]})")
            continue
        return backup.path
    raise MamaError(
        f"there is no sound backup of {db} to restore; the damaged file is left as it is"
    )
