"""Services room: saving, evolution chains, import/export. Uses storage, never writes SQL."""
