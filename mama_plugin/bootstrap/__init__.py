"""The plugin builds its own Python environment. Standard library only.

Claude Code installs no Python packages, so on first use the launchers in ``bin/`` start
``python -m mama_plugin.bootstrap`` under the system Python: it builds ``DATA/venv`` (see
:mod:`.paths`), core requirements first, then the optional local-model runtime. Until the core
is ready, hooks stay silent and ``bin/mama-server`` runs :mod:`.bridge`, a standard-library MCP
server that answers at once and hands the session over to the real server when it can.
Nothing here may import a third-party package.
"""
