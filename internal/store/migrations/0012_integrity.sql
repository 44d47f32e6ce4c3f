-- 0012: what homard knows about the soundness of its own records.
--
-- One row (id = 1). The audit chain is verified incrementally: rows after
-- verified_seq are checked against verified_hash at each start, and a full
-- pass from base_seq/base_hash (genesis until the owner acknowledges a
-- break) runs at most once a day and in `homard doctor`. verified_seq also
-- catches records deleted from the end of the chain.
--
-- problem is non-empty while homard refuses side effects: it names what
-- failed (the audit chain, the database's own check). The owner clears it
-- with `homard doctor --ack`, which records acked_problem and moves the base
-- to the head of the chain as it is then, so the known break is not found
-- again and everything after it is verified as before.
CREATE TABLE integrity (
	id            INTEGER PRIMARY KEY CHECK (id = 1),
	base_seq      INTEGER NOT NULL DEFAULT 0,
	base_hash     TEXT    NOT NULL DEFAULT '',
	verified_seq  INTEGER NOT NULL DEFAULT 0,
	verified_hash TEXT    NOT NULL DEFAULT '',
	full_at       INTEGER,             -- last full check
	problem       TEXT    NOT NULL DEFAULT '',
	problem_at    INTEGER,
	acked_problem TEXT    NOT NULL DEFAULT '',
	acked_at      INTEGER,
	acked_by      TEXT    NOT NULL DEFAULT ''
) STRICT;

INSERT INTO integrity (id) VALUES (1);

-- Runs left "running" are looked up at every start (a process that died
-- leaves them; they are marked interrupted). Only running rows are indexed:
-- a write's row enters the index once and leaves it when it finishes, and
-- reads, denials and pending cards never touch it.
CREATE INDEX tool_runs_running ON tool_runs (seq) WHERE status = 'running';
