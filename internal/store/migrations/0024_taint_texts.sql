-- 0024: per-value taint (issue 23, permissions.taint = "value"). The texts
-- a session's model was shown, with where each came from, so that a
-- restarted homard rebuilds the session's ledger (internal/taint) rather
-- than forget what it read. label: 0 public (a web page), 1 private (a
-- file, command output, memory, an answer obtained with a secret), 2 what
-- the owner typed. Deleted with the session's conversation.
CREATE TABLE taint_texts (
	id         INTEGER PRIMARY KEY,
	session_id TEXT    NOT NULL,
	label      INTEGER NOT NULL CHECK (label IN (0, 1, 2)),
	what       TEXT    NOT NULL,
	body       TEXT    NOT NULL,
	at         INTEGER NOT NULL
) STRICT;

CREATE INDEX taint_texts_session ON taint_texts (session_id, id);
