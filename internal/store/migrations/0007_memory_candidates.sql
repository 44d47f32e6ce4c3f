-- 0007: memory candidates. After a turn a model call proposes what might be
-- worth remembering about the owner; a proposal waits here (buffered) until
-- it is seen again or the owner accepts it (homard memory review accept),
-- and is then written to memory.md (promoted). A proposal that contradicts
-- a remembered preference waits for the owner (review). Unlike the memory
-- projection this table is not rebuilt from memory.md: it holds what the
-- owner has not confirmed yet. Text is checked for secrets before it is
-- written here (internal/memory).

CREATE TABLE memory_candidates (
	id             TEXT    PRIMARY KEY, -- c_…
	owner          TEXT    NOT NULL,
	norm           TEXT    NOT NULL,    -- normalized text: what "seen again" compares
	text           TEXT    NOT NULL,    -- as first proposed
	kind           TEXT    NOT NULL,    -- fact, preference or task
	first_seen     INTEGER NOT NULL,    -- unix nanoseconds
	last_seen      INTEGER NOT NULL,
	seen           INTEGER NOT NULL,    -- how many turns proposed it
	source         TEXT    NOT NULL,    -- session/turn that first proposed it
	status         TEXT    NOT NULL CHECK (status IN ('buffered', 'promoted', 'review', 'dismissed')),
	conflicts_with TEXT    NOT NULL DEFAULT '', -- the memory unit it contradicts (review)
	unit_id        TEXT    NOT NULL DEFAULT '', -- the memory unit it became (promoted)
	UNIQUE (owner, norm)
) STRICT;

CREATE INDEX memory_candidates_status ON memory_candidates (owner, status, last_seen);
