-- 0003: artifacts. A tool result longer than the arbiter's threshold is
-- kept whole here (already redacted by the arbiter, in the same
-- transaction as its audit record); the model gets a preview and the id,
-- and reads on with read_artifact, which only ever serves the owner's own
-- artifacts. Rows are immutable once written.

CREATE TABLE artifacts (
	id         TEXT    PRIMARY KEY,
	owner      TEXT    NOT NULL CHECK (owner <> ''),
	session    TEXT    NOT NULL,
	tool_run   TEXT,             -- the ToolRun that produced it; NULL if none
	tool       TEXT,
	untrusted  INTEGER CHECK (untrusted IN (0, 1)),
	created_at INTEGER,
	text       TEXT
) STRICT;
