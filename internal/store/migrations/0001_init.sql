-- 0001: sessions, tool runs, approvals, grants and the audit chain.
-- Times are INTEGER unix nanoseconds, UTC. Tables are STRICT so a wrong
-- type is an error instead of a silent coercion.

CREATE TABLE sessions (
	id         TEXT    PRIMARY KEY,
	owner      TEXT    NOT NULL CHECK (owner <> ''),
	created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE approvals (
	id          TEXT    PRIMARY KEY,
	tool        TEXT    NOT NULL,
	plan_hash   TEXT    NOT NULL,
	owner       TEXT    NOT NULL,
	session_id  TEXT    NOT NULL REFERENCES sessions(id),
	display     TEXT    NOT NULL,
	plan        TEXT    NOT NULL,
	targets     TEXT    NOT NULL, -- JSON array of strings
	risk        INTEGER NOT NULL,
	status      TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'consumed', 'expired')),
	scope       TEXT    NOT NULL DEFAULT '' CHECK (scope IN ('', 'once', 'session', 'always')),
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	decided_at  INTEGER,
	decided_by  TEXT    NOT NULL DEFAULT '',
	consumed_at INTEGER
) STRICT;

-- Request and Consume look an approval up by its exact binding and status.
CREATE INDEX approvals_binding ON approvals (tool, plan_hash, owner, session_id, status);
-- List shows the newest first.
CREATE INDEX approvals_created ON approvals (created_at);

CREATE TABLE grants (
	id          TEXT    PRIMARY KEY,
	owner       TEXT    NOT NULL,
	session_id  TEXT    REFERENCES sessions(id), -- NULL: any session (scope always)
	tool        TEXT    NOT NULL,
	patterns    TEXT    NOT NULL, -- JSON array; [] is a tool-wide grant
	max_risk    INTEGER NOT NULL,
	scope       TEXT    NOT NULL CHECK (scope IN ('session', 'always')),
	approval_id TEXT    NOT NULL REFERENCES approvals(id),
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	revoked_at  INTEGER,
	CHECK ((scope = 'session') = (session_id IS NOT NULL))
) STRICT;

-- MatchGrant looks grants up by owner and tool; Grants lists by owner.
CREATE INDEX grants_owner_tool ON grants (owner, tool);

CREATE TABLE tool_runs (
	id          TEXT    PRIMARY KEY,
	session_id  TEXT    NOT NULL REFERENCES sessions(id),
	owner       TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	plan_hash   TEXT    NOT NULL,
	plan        TEXT    NOT NULL,
	display     TEXT    NOT NULL,
	status      TEXT    NOT NULL CHECK (status IN ('requested', 'approved', 'running', 'succeeded', 'failed', 'denied', 'cancelled')),
	decision    TEXT    NOT NULL,
	rule        TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	approval_id TEXT    REFERENCES approvals(id),
	result      TEXT    NOT NULL DEFAULT '',
	is_error    INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;

-- No secondary indexes on tool_runs: every index is another page written
-- in the hot path's commit. Add one with a migration when a query needs it.

-- The audit chain. seq is assigned by audit.Append (last + 1), not by
-- SQLite, so a gap left by a deleted row stays visible. No foreign keys:
-- a denial for an unknown caller is recorded too, and deleting a session
-- must never reach into the audit.
CREATE TABLE audit (
	seq         INTEGER PRIMARY KEY,
	time        INTEGER NOT NULL,
	owner       TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	trust       TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	decision    TEXT    NOT NULL,
	rule        TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	args        TEXT    NOT NULL,
	plan_hash   TEXT    NOT NULL,
	run_id      TEXT    NOT NULL,
	approval_id TEXT    NOT NULL,
	prev_hash   TEXT    NOT NULL,
	hash        TEXT    NOT NULL
) STRICT;

-- Append-only through SQL. This stops mistakes, not an attacker who owns
-- the file (they can drop the triggers); the hash chain catches that.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit is append-only: rows cannot be updated');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit is append-only: rows cannot be deleted');
END;
