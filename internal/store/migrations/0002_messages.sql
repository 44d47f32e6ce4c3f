-- 0002: the conversation. A turn is written whole, in one transaction
-- (Tx.AppendTurn): its row in turns, then its messages in order. A turn
-- that was cancelled or failed leaves nothing behind.

CREATE TABLE turns (
	session_id    TEXT    NOT NULL REFERENCES sessions(id),
	turn          INTEGER NOT NULL CHECK (turn >= 1),
	input_tokens  INTEGER NOT NULL CHECK (input_tokens >= 0),
	output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0),
	cached_tokens INTEGER NOT NULL CHECK (cached_tokens >= 0),
	stopped       TEXT    NOT NULL DEFAULT '', -- why the loop stopped early; '' when the model answered
	created_at    INTEGER NOT NULL,
	PRIMARY KEY (session_id, turn)
) STRICT;

CREATE TABLE messages (
	id           INTEGER PRIMARY KEY,
	session_id   TEXT    NOT NULL REFERENCES sessions(id),
	turn         INTEGER NOT NULL,
	seq          INTEGER NOT NULL CHECK (seq >= 0),
	role         TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
	content      TEXT    NOT NULL, -- redacted by the caller
	tool_calls   TEXT,             -- JSON array on an assistant message that proposed calls; else NULL
	tool_call_id TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	FOREIGN KEY (session_id, turn) REFERENCES turns(session_id, turn),
	-- Also the index Messages reads a session through, in order.
	UNIQUE (session_id, turn, seq)
) STRICT;
