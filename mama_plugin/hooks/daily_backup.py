"""The day's backup for a session too short for the server's turn, started off the hook's path.

The MCP server takes the day's backup ``BACKUP_AFTER_S`` after it starts; a short session
(``claude -p``) ends before that, and none was ever taken. So the SessionStart hook, once it has
answered, looks whether one may be due (one stat of the stamp the last try left) and, only
then, starts
``python -m mama_plugin.hooks.daily_backup`` detached: in a session of its own, its standard
streams closed, so neither the hook nor Claude Code waits for it. It takes the backup under
the backups' lock (:func:`~mama_plugin.storage.backup.daily_backup`: another process taking it
meanwhile makes this a no-op) and logs a failure to the hook log; it never raises.
"""

from __future__ import annotations

import os
import sys
import time

from ..config import Config
from ..logs import append
from ..storage.peek import backup_may_be_due


def kick(config: Config) -> bool:
    """Start the day's backup detached when one is due; whether it was started. Never raises:
    a failure is one line in the hook log."""
    try:
        if not config.db_path.is_file() or not backup_may_be_due(config.db_path, time.time()):
            return False
        import subprocess  # once a day: the spawn is all the hook pays

        subprocess.Popen(
            [sys.executable, "-P", "-m", __name__],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the session: Claude Code ends its own group
            env={**os.environ, "MAMA_HOME": str(config.home)},
            cwd=config.home,
        )
    except Exception as exc:
        append("hooks", f"daily backup: not started: {type(exc).__name__}: {exc}")
        return False
    return True


def main() -> int:
    """Take the day's backup of the MAMA home's store, if still due; always 0."""
    from ..storage import Store
    from ..storage.backup import daily_backup

    config = Config(strict=False)
    try:
        with Store.open(config=config) as store:
            taken = daily_backup(store, keep=config.settings.backups_max_count)
        if taken is not None:
            append("hooks", f"daily backup: {taken}")
    except Exception as exc:
        append("hooks", f"daily backup: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
