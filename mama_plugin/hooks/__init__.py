"""Claude Code command hooks: thin, fail-open entry points (``python -m mama_plugin.hooks``).

Only SessionStart runs as a command hook: UserPromptSubmit and Stop are ``mcp_tool`` hooks
answered by the already-running MCP server (``server/hook_tools.py``). A cold hook process
imports the standard library and apsw, nothing heavier (``tests/test_hooks.py`` checks).
"""
