"""The team store: a project's memories shared through PostgreSQL + pgvector.

Each developer's SQLite stays the source of truth for hooks; triggers queue every change of a
connected project in an outbox (:mod:`.local_schema`), and :mod:`.sync` pushes it and pulls the
teammates' changes, per project, by a server-side sequence. The server's schema, roles, audit
and search live in :mod:`.server_schema`, :mod:`.admin` and :mod:`.search`. Only the standard
library and apsw are imported here: ``psycopg`` is loaded when a sync or an admin command runs.
"""
