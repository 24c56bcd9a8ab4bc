"""Transfer room: MAMA v1.0 import, MAMA's JSON dump and restore, the Markdown export.

Writes MAMA's store only through the storage room's API; reads a v1.0 SQLite file directly.
"""

from .dump import export_data, import_dump
from .imports import ImportReport, import_file, rollback_last_import
from .markdown import export_markdown

__all__ = [
    "ImportReport",
    "export_data",
    "export_markdown",
    "import_dump",
    "import_file",
    "rollback_last_import",
]
