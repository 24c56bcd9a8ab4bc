"""The local side of the team store, in the user's SQLite: outbox, versions, conflicts.

``tables`` is the ladder's ``team_outbox`` step (the triggers that fill the outbox);
``outbox`` the connected projects, what waits to be pushed and the versions seen; ``apply``
a teammate's change written here; ``conflicts`` the conflicts a sync raised and their
settling. The team database's side lives in :mod:`mama_plugin.team`.
"""
