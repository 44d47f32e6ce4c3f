-- 0021: batched memory capture (issue 15). An owner turn that capture
-- should read is queued in capture_queue in the Write that stores it; one
-- capture call later covers a session's queued turns (after
-- memory.capture_every of them, when the session has been idle for
-- memory.capture_idle, or at a graceful stop), so a restart loses none.
-- claimed_at is set while a capture call holds the row (NULL: waiting); a
-- claim older than a few minutes belongs to a process that died and is
-- taken again. attempts counts capture calls that failed before the model
-- answered; the row is dropped after a few.
CREATE TABLE capture_queue (
	session_id TEXT    NOT NULL,
	turn       INTEGER NOT NULL,
	claimed_at INTEGER,
	attempts   INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	PRIMARY KEY (session_id, turn),
	FOREIGN KEY (session_id, turn) REFERENCES turns(session_id, turn)
) STRICT;

-- One row per capture call that the model answered: its tokens, counted
-- with the session's usage (a capture is not a turn, so not in turns).
CREATE TABLE capture_usage (
	id            INTEGER PRIMARY KEY,
	session_id    TEXT    NOT NULL REFERENCES sessions(id),
	first_turn    INTEGER NOT NULL CHECK (first_turn >= 1),
	last_turn     INTEGER NOT NULL CHECK (last_turn >= first_turn),
	turns         INTEGER NOT NULL CHECK (turns >= 1),
	input_tokens  INTEGER NOT NULL CHECK (input_tokens >= 0),
	output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0),
	cached_tokens INTEGER NOT NULL CHECK (cached_tokens >= 0),
	created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX capture_usage_session ON capture_usage (session_id);
