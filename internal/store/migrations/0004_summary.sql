-- 0004: the summary of a session's folded turns. When a conversation
-- outgrows the context budget, its oldest turns are folded into one
-- summary; the turns stay in messages, but only those after through_turn
-- are sent to the model again. One row per session, replaced as the
-- summary grows; it is written in the same transaction as the turn that
-- made it.

CREATE TABLE session_summaries (
	session_id   TEXT    PRIMARY KEY REFERENCES sessions(id),
	summary      TEXT    NOT NULL, -- redacted by the caller
	through_turn INTEGER NOT NULL CHECK (through_turn >= 1), -- last turn the summary covers
	updated_at   INTEGER NOT NULL,
	FOREIGN KEY (session_id, through_turn) REFERENCES turns(session_id, turn)
) STRICT;
