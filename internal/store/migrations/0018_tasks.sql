-- 0018: scheduled tasks (issue 14; docs/ARCHITECTURE.md "Scheduled
-- tasks"). A task's body is the canonical JSON the owner approved
-- (task.Body.Canonical); mac is its HMAC-SHA-256 under a key derived from
-- the vault key, which is never stored here, so an edit of body (or of
-- mac) made in this file is caught before the next run. Tasks are never
-- deleted, only removed, so their runs stay readable.

CREATE TABLE tasks (
	id          TEXT    PRIMARY KEY,
	owner       TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	body        TEXT    NOT NULL,            -- canonical JSON of the body
	mac         TEXT    NOT NULL DEFAULT '', -- hex HMAC-SHA-256 of body; '' until approved
	status      TEXT    NOT NULL CHECK (status IN ('pending', 'active', 'paused', 'removed')),
	approved_at INTEGER,
	expires_at  INTEGER,                     -- copy of the body's expiry, for listing
	next_run_at INTEGER,                     -- NULL: no slot left
	created_at  INTEGER NOT NULL,
	-- Only an approved task can be active or paused.
	CHECK (status IN ('pending', 'removed') OR (mac != '' AND approved_at IS NOT NULL))
) STRICT;
-- The scheduler's one query: the active task due first. Partial, so paused,
-- pending and removed tasks cost nothing; id breaks ties in index order.
CREATE INDEX tasks_due ON tasks (next_run_at, id) WHERE status = 'active';

-- One row per slot of a task: UNIQUE (task_id, slot_key) is what makes a
-- slot run at most once, whoever claims it (two schedulers, a restart).
CREATE TABLE task_runs (
	id         INTEGER PRIMARY KEY,
	task_id    TEXT    NOT NULL REFERENCES tasks(id),
	slot_key   TEXT    NOT NULL,
	slot_at    INTEGER NOT NULL,
	status     TEXT    NOT NULL CHECK (status IN ('claimed', 'running', 'succeeded', 'failed', 'skipped', 'interrupted', 'refused')),
	started_at INTEGER NOT NULL,            -- when the slot was claimed
	ended_at   INTEGER,
	summary    TEXT    NOT NULL DEFAULT '',
	usage      TEXT    NOT NULL DEFAULT '{}', -- JSON
	tokens     INTEGER NOT NULL DEFAULT 0,    -- model tokens, summed for the daily limit
	error      TEXT    NOT NULL DEFAULT '',
	UNIQUE (task_id, slot_key)
) STRICT;
-- A task's recent runs and its runs per day.
CREATE INDEX task_runs_task ON task_runs (task_id, started_at);
-- Every task's tokens today. Partial: a run enters it when it ends having
-- used tokens, so claiming a slot (tokens 0) writes one index less. Each
-- index costs a claim ~6 µs; runs left open by a stop are found by a scan,
-- once per start, so they have no index.
CREATE INDEX task_runs_tokens ON task_runs (started_at) WHERE tokens > 0;
