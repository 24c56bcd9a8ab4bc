"""The team database's schema: MAMA's own ladder of named steps, recorded in the database.

Everything lives in the ``mama`` schema. ``mama.schema_migrations`` names the steps applied;
each runs in its own transaction behind an advisory lock, so two admins running
``mama team setup`` at once climb the ladder once. Developers belong to the group role
``mama_team`` (table rights) and read or write only the projects ``mama.members`` gives them
(row-level security); the table owner (the admin) sees everything. ``mama.audit`` is
append-only: rows come from triggers, and an update, delete or truncate is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TeamNotSetUp

GROUP_ROLE = "mama_team"
_LOCK = "hashtext('mama:migrations')"


@dataclass(frozen=True)
class ServerStep:
    """One migration of the team database: its recorded name and its SQL."""

    name: str
    sql: str


_TABLES = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE mama.projects (
    name text PRIMARY KEY CHECK (name <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE mama.members (
    project text NOT NULL REFERENCES mama.projects(name) ON DELETE CASCADE,
    member name NOT NULL,
    granted_by name NOT NULL DEFAULT session_user,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project, member)
);
CREATE SEQUENCE mama.change_seq;
CREATE TABLE mama.memories (
    id text PRIMARY KEY,
    project text NOT NULL REFERENCES mama.projects(name),
    type text NOT NULL,
    topic text NOT NULL DEFAULT '',
    content text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'current',
    outcome_status text NOT NULL DEFAULT 'PENDING',
    body jsonb NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    digest text NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    seq bigint NOT NULL,
    updated_at bigint NOT NULL DEFAULT 0,
    changed_by name NOT NULL DEFAULT session_user,
    changed_at timestamptz NOT NULL DEFAULT now(),
    tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('english', topic || ' ' || content || ' '
                    || coalesce(body #>> '{reasoning,primary}', ''))
    ) STORED,
    embedding vector,
    embedding_model text
);
CREATE INDEX memories_by_seq ON mama.memories(project, seq);
CREATE INDEX memories_fulltext ON mama.memories USING gin(tsv);
CREATE TABLE mama.links (
    project text NOT NULL REFERENCES mama.projects(name),
    from_id text NOT NULL,
    to_id text NOT NULL,
    relationship text NOT NULL,
    body jsonb NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    seq bigint NOT NULL,
    changed_by name NOT NULL DEFAULT session_user,
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (from_id, to_id, relationship)
);
CREATE INDEX links_by_seq ON mama.links(project, seq);
CREATE TABLE mama.conflicts (
    id bigserial PRIMARY KEY,
    project text NOT NULL REFERENCES mama.projects(name),
    memory_id text NOT NULL,
    base_version integer NOT NULL,
    server_version integer NOT NULL,
    mine jsonb,
    raised_by name NOT NULL DEFAULT session_user,
    raised_at timestamptz NOT NULL DEFAULT now()
);
"""

_AUDIT = """
CREATE TABLE mama.audit (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor name NOT NULL DEFAULT session_user,
    project text NOT NULL,
    kind text NOT NULL,
    key text NOT NULL,
    op text NOT NULL,
    version integer
);
CREATE INDEX audit_by_project ON mama.audit(project, id);
-- Runs as the schema's owner: a developer writes audit rows only through these triggers.
CREATE FUNCTION mama.audit_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = mama, pg_catalog AS $$
BEGIN
    IF TG_TABLE_NAME = 'memories' THEN
        INSERT INTO mama.audit(project, kind, key, op, version) VALUES (
            NEW.project, 'memory', NEW.id,
            CASE WHEN TG_OP = 'INSERT' THEN 'insert' WHEN NEW.deleted THEN 'delete'
                 ELSE 'update' END,
            NEW.version);
    ELSIF TG_TABLE_NAME = 'links' THEN
        INSERT INTO mama.audit(project, kind, key, op) VALUES (
            NEW.project, 'link', NEW.from_id || ' ' || NEW.relationship || ' ' || NEW.to_id,
            CASE WHEN NEW.deleted THEN 'delete' ELSE 'upsert' END);
    ELSIF TG_TABLE_NAME = 'conflicts' THEN
        INSERT INTO mama.audit(project, kind, key, op, version)
            VALUES (NEW.project, 'memory', NEW.memory_id, 'conflict', NEW.server_version);
    ELSIF TG_TABLE_NAME = 'members' THEN
        INSERT INTO mama.audit(project, kind, key, op) VALUES (
            coalesce(NEW.project, OLD.project), 'member', coalesce(NEW.member, OLD.member),
            lower(TG_OP));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_audited AFTER INSERT OR UPDATE OF version, deleted ON mama.memories
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER links_audited AFTER INSERT OR UPDATE OF body, deleted ON mama.links
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER conflicts_audited AFTER INSERT ON mama.conflicts
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER members_audited AFTER INSERT OR DELETE ON mama.members
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE FUNCTION mama.audit_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'mama.audit is append-only (% refused)', TG_OP;
END $$;
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON mama.audit
    FOR EACH ROW EXECUTE FUNCTION mama.audit_is_append_only();
CREATE TRIGGER audit_not_truncated BEFORE TRUNCATE ON mama.audit
    FOR EACH STATEMENT EXECUTE FUNCTION mama.audit_is_append_only();
"""

_ACCESS = f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{GROUP_ROLE}') THEN
        CREATE ROLE {GROUP_ROLE} NOLOGIN;
    END IF;
END $$;
GRANT USAGE ON SCHEMA mama TO {GROUP_ROLE};
GRANT SELECT ON mama.schema_migrations, mama.projects, mama.members, mama.audit TO {GROUP_ROLE};
GRANT SELECT, INSERT, UPDATE ON mama.memories, mama.links TO {GROUP_ROLE};
GRANT SELECT, INSERT ON mama.conflicts TO {GROUP_ROLE};
GRANT USAGE ON SEQUENCE mama.change_seq, mama.conflicts_id_seq TO {GROUP_ROLE};
ALTER TABLE mama.members ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_grants ON mama.members FOR SELECT USING (member = current_user);
ALTER TABLE mama.projects ENABLE ROW LEVEL SECURITY;
CREATE POLICY granted ON mama.projects FOR SELECT
    USING (name IN (SELECT project FROM mama.members));
ALTER TABLE mama.memories ENABLE ROW LEVEL SECURITY;
CREATE POLICY granted ON mama.memories
    USING (project IN (SELECT project FROM mama.members))
    WITH CHECK (project IN (SELECT project FROM mama.members));
ALTER TABLE mama.links ENABLE ROW LEVEL SECURITY;
CREATE POLICY granted ON mama.links
    USING (project IN (SELECT project FROM mama.members))
    WITH CHECK (project IN (SELECT project FROM mama.members));
ALTER TABLE mama.conflicts ENABLE ROW LEVEL SECURITY;
CREATE POLICY granted ON mama.conflicts
    USING (project IN (SELECT project FROM mama.members))
    WITH CHECK (project IN (SELECT project FROM mama.members));
ALTER TABLE mama.audit ENABLE ROW LEVEL SECURITY;
CREATE POLICY granted ON mama.audit FOR SELECT
    USING (project IN (SELECT project FROM mama.members));
"""

# Every INSERT, UPDATE and DELETE of a shared table is audited by the database, whatever the
# client wrote (a row edited with its version kept once left no audit row), and the author
# columns are stamped with the login role (``session_user``: a SECURITY DEFINER function or a
# SET ROLE does not change it), never taken from the client (a faked "changed by carol" was
# shown by team search). Sending a vector is recorded as ``embed`` and keeps the author.
_AUDIT_EVERY_CHANGE = """
DROP TRIGGER memories_audited ON mama.memories;
DROP TRIGGER links_audited ON mama.links;
DROP TRIGGER conflicts_audited ON mama.conflicts;
DROP TRIGGER members_audited ON mama.members;
CREATE FUNCTION mama.only_vector(a jsonb, b jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (a - '{embedding,embedding_model,changed_by,changed_at,tsv}'::text[])
         = (b - '{embedding,embedding_model,changed_by,changed_at,tsv}'::text[])
$$;
CREATE OR REPLACE FUNCTION mama.audit_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = mama, pg_catalog AS $$
DECLARE
    r record;
    op text := CASE TG_OP WHEN 'INSERT' THEN 'insert' WHEN 'DELETE' THEN 'erase'
                          ELSE 'update' END;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'memories' THEN
        IF TG_OP = 'UPDATE' AND NEW.deleted AND NOT OLD.deleted THEN
            op := 'delete';
        ELSIF TG_OP = 'UPDATE' AND mama.only_vector(to_jsonb(NEW), to_jsonb(OLD)) THEN
            op := 'embed';
        END IF;
        INSERT INTO mama.audit(project, kind, key, op, version)
            VALUES (r.project, 'memory', r.id, op, r.version);
    ELSIF TG_TABLE_NAME = 'links' THEN
        IF TG_OP <> 'DELETE' THEN
            op := CASE WHEN NEW.deleted THEN 'delete' ELSE 'upsert' END;
        END IF;
        INSERT INTO mama.audit(project, kind, key, op) VALUES (
            r.project, 'link', r.from_id || ' ' || r.relationship || ' ' || r.to_id, op);
    ELSIF TG_TABLE_NAME = 'conflicts' THEN
        INSERT INTO mama.audit(project, kind, key, op, version) VALUES (
            r.project, 'memory', r.memory_id,
            CASE TG_OP WHEN 'INSERT' THEN 'conflict' ELSE 'conflict ' || op END,
            r.server_version);
    ELSIF TG_TABLE_NAME = 'members' THEN
        INSERT INTO mama.audit(project, kind, key, op)
            VALUES (r.project, 'member', r.member, lower(TG_OP));
    END IF;
    RETURN NULL;
END $$;
CREATE FUNCTION mama.stamp_author() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME IN ('memories', 'links') THEN
        IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'memories'
                AND mama.only_vector(to_jsonb(NEW), to_jsonb(OLD)) THEN
            NEW.changed_by := OLD.changed_by;
            NEW.changed_at := OLD.changed_at;
        ELSE
            NEW.changed_by := session_user;
            NEW.changed_at := now();
        END IF;
    ELSIF TG_TABLE_NAME = 'conflicts' AND TG_OP = 'INSERT' THEN
        NEW.raised_by := session_user;
    ELSIF TG_TABLE_NAME = 'members' AND TG_OP = 'INSERT' THEN
        NEW.granted_by := session_user;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER memories_audited AFTER INSERT OR UPDATE OR DELETE ON mama.memories
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER links_audited AFTER INSERT OR UPDATE OR DELETE ON mama.links
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER conflicts_audited AFTER INSERT OR UPDATE OR DELETE ON mama.conflicts
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER members_audited AFTER INSERT OR UPDATE OR DELETE ON mama.members
    FOR EACH ROW EXECUTE FUNCTION mama.audit_change();
CREATE TRIGGER memories_stamped BEFORE INSERT OR UPDATE ON mama.memories
    FOR EACH ROW EXECUTE FUNCTION mama.stamp_author();
CREATE TRIGGER links_stamped BEFORE INSERT OR UPDATE ON mama.links
    FOR EACH ROW EXECUTE FUNCTION mama.stamp_author();
CREATE TRIGGER conflicts_stamped BEFORE INSERT OR UPDATE ON mama.conflicts
    FOR EACH ROW EXECUTE FUNCTION mama.stamp_author();
CREATE TRIGGER members_stamped BEFORE INSERT OR UPDATE ON mama.members
    FOR EACH ROW EXECUTE FUNCTION mama.stamp_author();
"""

# A forget or a redaction leaves nothing of the text in the team schema. A memory's tombstone
# takes its links' bodies (their reasons quote it) and the versions a conflict kept of it with
# it, whoever pushed it. ``mama.redact`` masks a string, any case, in every row of a project
# the calling role was given (memories, links, conflicts); a memory changed gets a new
# version and sequence, so every teammate's next sync takes the masked text.
_ERASURE = f"""
CREATE FUNCTION mama.forget_tombstoned() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = mama, pg_catalog AS $$
BEGIN
    UPDATE mama.links SET body = '{{}}', deleted = true, seq = nextval('mama.change_seq')
        WHERE (from_id = NEW.id OR to_id = NEW.id) AND (NOT deleted OR body <> '{{}}');
    UPDATE mama.conflicts SET mine = NULL WHERE memory_id = NEW.id AND mine IS NOT NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_forgotten AFTER UPDATE OF deleted ON mama.memories
    FOR EACH ROW WHEN (NEW.deleted) EXECUTE FUNCTION mama.forget_tombstoned();
CREATE FUNCTION mama.masked(j jsonb, pattern text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN CASE jsonb_typeof(j)
        WHEN 'string' THEN to_jsonb(regexp_replace(j #>> '{{}}', pattern, '[REDACTED]', 'gi'))
        WHEN 'object' THEN coalesce((
            SELECT jsonb_object_agg(regexp_replace(k, pattern, '[REDACTED]', 'gi'),
                                    mama.masked(v, pattern))
            FROM jsonb_each(j) AS e(k, v)), '{{}}'::jsonb)
        WHEN 'array' THEN coalesce((
            SELECT jsonb_agg(mama.masked(v, pattern) ORDER BY n)
            FROM jsonb_array_elements(j) WITH ORDINALITY AS a(v, n)), '[]'::jsonb)
        ELSE j END;
END $$;
CREATE FUNCTION mama.redact(p_project text, pattern text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = mama, pg_catalog AS $$
DECLARE
    changed integer := 0;
    n integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM mama.members
                   WHERE project = p_project AND member = session_user) THEN
        RAISE EXCEPTION 'role % was not given the team project %', session_user, p_project
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF length(pattern) < 3 THEN
        RAISE EXCEPTION 'a pattern to redact has at least 3 characters';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('mama:' || p_project));
    UPDATE mama.memories SET
        topic = regexp_replace(topic, pattern, '[REDACTED]', 'gi'),
        content = regexp_replace(content, pattern, '[REDACTED]', 'gi'),
        body = mama.masked(body, pattern), digest = '', embedding = NULL,
        version = version + 1, seq = nextval('mama.change_seq')
        WHERE project = p_project
          AND (topic ~* pattern OR content ~* pattern OR mama.masked(body, pattern) <> body);
    GET DIAGNOSTICS n = ROW_COUNT;
    changed := changed + n;
    UPDATE mama.links SET body = mama.masked(body, pattern), seq = nextval('mama.change_seq')
        WHERE project = p_project AND mama.masked(body, pattern) <> body;
    GET DIAGNOSTICS n = ROW_COUNT;
    changed := changed + n;
    UPDATE mama.conflicts SET mine = mama.masked(mine, pattern)
        WHERE project = p_project AND mama.masked(mine, pattern) <> mine;
    GET DIAGNOSTICS n = ROW_COUNT;
    changed := changed + n;
    IF changed > 0 THEN
        PERFORM pg_notify('mama_changes', p_project);
    END IF;
    RETURN changed;
END $$;
REVOKE ALL ON FUNCTION mama.redact(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mama.redact(text, text) TO {GROUP_ROLE};
"""

# The members subquery of each policy is itself filtered by members' own policy (a developer
# sees only their own grants), so "project IN (SELECT project FROM mama.members)" reads: a
# project this role was given.
SERVER_STEPS: tuple[ServerStep, ...] = (
    ServerStep("tables", _TABLES),
    ServerStep("audit", _AUDIT),
    ServerStep("access", _ACCESS),
    ServerStep("audit_every_change", _AUDIT_EVERY_CHANGE),
    ServerStep("erasure", _ERASURE),
)


def applied(conn: Any) -> list[str]:
    """The names of the steps this team database has climbed (empty: not set up)."""
    exists = conn.execute("SELECT to_regclass('mama.schema_migrations') IS NOT NULL").fetchone()
    if not exists[0]:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM mama.schema_migrations ORDER BY name")]


def migrate(conn: Any) -> list[str]:
    """Apply every step the team database lacks, each in its own transaction; the names applied.

    ``conn`` is a psycopg connection of the schema's owner (the admin), not in autocommit.
    """
    done: list[str] = []
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        conn.execute("CREATE SCHEMA IF NOT EXISTS mama")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS mama.schema_migrations ("
            "name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    for step in SERVER_STEPS:
        with conn.transaction():
            conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
            # Another admin may have applied it between our read and the lock.
            if step.name in applied(conn):
                continue
            conn.execute(step.sql)
            conn.execute("INSERT INTO mama.schema_migrations(name) VALUES (%s)", (step.name,))
            done.append(step.name)
    return done


def require_latest(conn: Any, where: str) -> None:
    """Raise TeamNotSetUp unless every step is applied (``where`` names the database)."""
    have = set(applied(conn))
    missing = [s.name for s in SERVER_STEPS if s.name not in have]
    if missing:
        state = "has no MAMA schema" if not have else f"lacks steps {', '.join(missing)}"
        raise TeamNotSetUp(
            f"the team database {where} {state}; its owner runs `mama team setup URL` first"
        )
