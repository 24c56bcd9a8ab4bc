"""``python -m mama_plugin.bootstrap.notice``: tell the user and the model, once, that MAMA is
installing its environment. Standard library only (the system Python runs it).

``bin/mama-hook session-start`` runs this while the core environment is not ready. It prints
the SessionStart hook's JSON: a ``systemMessage`` Claude Code shows the user (never the model)
and an ``additionalContext`` for the model. Once per install: ``DATA/notice-shown`` remembers
the core requirements it was shown for, so a plugin update that rebuilds the environment
tells them again, and every other session starts silent.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from ..home import private_folder
from . import paths

MARKER = "notice-shown"


def user_message() -> str:
    """What the user is shown."""
    return (
        "MAMA is installing its Python environment (first run: about a minute). Until it is "
        "ready its memory tools answer that they are installing; this session's work is "
        "checkpointed as soon as it is. Progress: " + str(paths.log_path())
    )


MODEL_CONTEXT = (
    "MAMA (the memory plugin) is installing its Python environment on this first run, which "
    "takes about a minute. Its memory tools are not ready yet: until then they answer that "
    "they are installing, and nothing can be recalled or saved through them. This session's "
    "work will be checkpointed automatically once the environment is ready, so carry on with "
    "the user's task."
)


def _digest() -> str:
    return hashlib.sha256(paths.CORE_REQUIREMENTS.read_bytes()).hexdigest()


def due() -> bool:
    """Whether this install has not shown the notice yet (never raises)."""
    try:
        shown = (paths.data_dir() / MARKER).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return True
    return shown != _digest()


def mark_shown() -> None:
    """Remember the notice was shown for these requirements (best effort)."""
    folder = paths.data_dir()
    try:
        private_folder(folder)
        tmp = folder / f".{MARKER}.{os.getpid()}"
        tmp.write_text(_digest() + "\n", encoding="utf-8")
        os.replace(tmp, folder / MARKER)
    except OSError:
        pass


def hook_output() -> str:
    """The SessionStart hook's JSON answer carrying the notice."""
    return json.dumps(
        {
            "systemMessage": user_message(),
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": MODEL_CONTEXT,
            },
        },
        ensure_ascii=False,
    )


def main() -> int:
    """Print the notice when due and remember it; always exit 0 (a hook never fails)."""
    try:
        if due():
            sys.stdout.write(hook_output())
            sys.stdout.flush()
            mark_shown()
    except (OSError, ValueError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
