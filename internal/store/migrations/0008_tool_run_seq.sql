-- 0008: tool runs numbered by their rowid.
-- A run's id used to be a random TEXT primary key, so every insert wrote two
-- b-tree pages, the row and its index entry: one WAL frame in three on the
-- arbiter's hot path (a read_file commits a run row and an audit record).
-- New runs are numbered by seq, the rowid, and their id is 'run_' || seq,
-- computed when read and not stored (id IS NULL). Runs recorded before keep
-- their random id, found through a partial index that new rows never enter.
CREATE TABLE tool_runs_v2 (
	seq         INTEGER PRIMARY KEY,
	id          TEXT,   -- a run's id from before 0008; NULL for runs since
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

INSERT INTO tool_runs_v2 (id, session_id, owner, tool, plan_hash, plan, display, status, decision, rule,
	reason, approval_id, result, is_error, created_at, updated_at)
SELECT id, session_id, owner, tool, plan_hash, plan, display, status, decision, rule,
	reason, approval_id, result, is_error, created_at, updated_at
FROM tool_runs ORDER BY rowid;

DROP TABLE tool_runs;
ALTER TABLE tool_runs_v2 RENAME TO tool_runs;

CREATE UNIQUE INDEX tool_runs_legacy_id ON tool_runs (id) WHERE id IS NOT NULL;
