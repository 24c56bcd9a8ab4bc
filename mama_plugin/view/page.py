"""The page: one self-contained HTML file, the store's data embedded as JSON, no network.

The template (``page.html``), its scripts (``view.js``, ``dashboards.js``, ``graph.js``) and
style (``view.css``) ship in this package and are inlined into the one file, so it opens from
disk with nothing fetched and no server listening (its Content-Security-Policy forbids any
fetch). The data goes in a ``<script type="application/json">`` block with ``<``, ``>``
and ``&`` written as JSON escapes: a memory holding ``</script>`` cannot end the block, and
the script only ever sets memory text as text (``textContent``), never as markup.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import MamaError
from ..home import private_folder, write_private
from .gather import ViewData

# The building blocks, chains and timeline; the dashboards; the graph, which starts the page.
SCRIPTS = ("view.js", "dashboards.js", "graph.js")
_MARKS = ("/*MAMA_STYLE*/", "/*MAMA_SCRIPT*/", "MAMA_DATA", "MAMA_TITLE")
# JSON escapes for the characters that could end or confuse the embedding block.
_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def embedded_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script>`` block (no ``<``, ``>`` or ``&`` left)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.translate(_SAFE).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _escape_html(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def render_page(data: ViewData) -> str:
    """The whole page for ``data``, as one string of HTML."""
    page = _asset("page.html")
    missing = [m for m in _MARKS if m not in page]
    if missing:  # a broken package, not a user's mistake; say which file
        raise MamaError(f"the view template lacks {', '.join(missing)}: reinstall mama-plugin")
    title = f"MAMA — {Path(data.project).name or data.project}"
    # The data goes in last, so no memory's text is ever searched for a marker.
    page = page.replace("/*MAMA_STYLE*/", _asset("view.css"))
    script = "\n".join(_asset(name) for name in SCRIPTS)
    if "</script" in script.lower():  # would end the inline block early
        raise MamaError("the view's script holds '</script': reinstall mama-plugin")
    page = page.replace("/*MAMA_SCRIPT*/", script)
    page = page.replace("MAMA_TITLE", _escape_html(title))
    return page.replace("MAMA_DATA", embedded_json(data.as_data()))


def write_page(data: ViewData, out: Path) -> Path:
    """Write the page for ``data`` to ``out`` (0600: memory is private); return its path.

    Raises MamaError naming the folder when it cannot be written.
    """
    out = out.expanduser().resolve()
    try:
        private_folder(out.parent)
        write_private(out, render_page(data))
    except OSError as exc:
        raise MamaError(
            f"cannot write the view to {out}: {exc.strerror or exc}; pass --out with a "
            "writable path"
        ) from exc
    return out
