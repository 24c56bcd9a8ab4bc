"""Where the plugin's code lives, and how a person runs its command. Standard library only.

Below the config (which reads ``MAMA_HOME``) and the errors (whose fix-it messages name the
command), so neither has to reach into :mod:`.paths`.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the plugin's root: bin/, mama_plugin/, templates/


def mama_command() -> str:
    """How a person runs MAMA's command in a terminal, as a fix-it message should spell it.

    ``sh ROOT/bin/mama`` (the real path) when this code runs from the plugin or a checkout: a
    terminal has no ``mama`` on its PATH, and the launcher picks the environment the hooks
    and the server use. ``mama`` when installed as a package (no launcher beside it).
    """
    import shlex  # here: a fix-it message is rare, every hook imports this module

    launcher = ROOT / "bin" / "mama"
    return f"sh {shlex.quote(str(launcher))}" if launcher.is_file() else "mama"
