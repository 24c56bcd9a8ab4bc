"""The page that shows a project's story: evolution chains, timeline, graph, outcomes, health.

:func:`~.gather.gather` reads the store (read-only); :func:`~.page.write_page` writes one
self-contained HTML file with the data embedded as JSON. The page is plain SVG and a small
hand-written script shipped beside this module (no library, nothing fetched, no listener).
"""

from __future__ import annotations

from .gather import ViewData, gather
from .page import render_page, write_page

__all__ = ["ViewData", "gather", "render_page", "write_page"]
