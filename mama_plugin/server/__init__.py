"""Surfaces: the MCP server (``mama serve``). Heavy imports happen when it starts, not here."""
