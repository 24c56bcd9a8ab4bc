"""``mama view``: one HTML page of the project's story, written to a file (no server)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..home import VIEWS
from .options import argument, command, flag, json_option, project_option
from .shared import open_store, print_json, project_of


def default_out(home: Path, project: str) -> Path:
    """Where the page goes without ``--out``: ``$MAMA_HOME/views/<project folder>.html``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(project).name).strip("-.") or "project"
    return home / VIEWS / f"{name}.html"


@command(
    "view",
    "write one self-contained HTML page of the project's story (evolution chains, timeline, "
    "graph, outcomes, health) and say where it is",
)
@project_option()
@argument("--out", help="the HTML file to write (default: $MAMA_HOME/views/<project>.html)")
@flag("--open", "open it in the default browser")
@json_option("print where it went and what it holds as JSON")
def cmd_view(args: argparse.Namespace) -> int:
    """Gather the project's story, write the page, print its path (and open it)."""
    from ..view import gather, write_page

    project = project_of(args)
    with open_store(args) as store:
        data = gather(store, project, args.config.settings)
    out = Path(args.out) if args.out else default_out(args.config.home, project)
    path = write_page(data, out)
    opened = _open(path) if args.open else None
    summary = {
        "path": str(path),
        "url": path.as_uri(),
        "project": project,
        "memories": len(data.memories),
        "links": len(data.links),
        "topics": len(data.chains),
        "pending_suggestions": len(data.suggestions),
        "flagged": len(data.flagged),
        "opened": opened,
    }
    if args.json:
        print_json(summary)
        return 0
    print(f"Wrote {path}")
    print(
        f"  {summary['memories']} memories, {summary['links']} links, {summary['topics']} "
        f"topics with decisions, {summary['pending_suggestions']} pending suggestions, "
        f"{summary['flagged']} flagged as changed"
    )
    if opened is False:
        print(f"  no browser could be started here: open {path.as_uri()} yourself")
    elif not args.open:
        print(f"  open it in a browser: {path.as_uri()}")
    return 0


def _open(path: Path) -> bool:
    """Ask the desktop's browser to open the file; False when none is known."""
    import webbrowser

    try:
        return bool(webbrowser.open(path.as_uri()))
    except webbrowser.Error:
        return False
