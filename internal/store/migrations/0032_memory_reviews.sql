-- 0032: the weekly memory review (internal/memreview). One review holds
-- the proposals one pass over the owner's memory made (merge duplicates,
-- delete a stale or contradicted note, replace one with a resolved text),
-- as a JSON array: each waits for the owner and changes memory.md only
-- when approved, and is bound to the texts of the units it was made from
-- (a hand edit since makes it stale, never applied). The last weekly slot
-- run is kept per owner so that a restart does not run it twice. Texts
-- are checked for secrets before they are written here.

CREATE TABLE memory_reviews (
	id         TEXT    PRIMARY KEY, -- rv_…
	owner      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,    -- unix nanoseconds
	status     TEXT    NOT NULL CHECK (status IN ('open', 'closed')),
	dropped    INTEGER NOT NULL,    -- the model's proposals that failed the checks
	proposals  TEXT    NOT NULL     -- JSON: [{n, action, ids, text, reason, bound, status}]
) STRICT;

CREATE INDEX memory_reviews_owner ON memory_reviews (owner, status, created_at);

CREATE TABLE memory_review_slots (
	owner TEXT    PRIMARY KEY,
	slot  INTEGER NOT NULL -- unix nanoseconds of the last weekly slot run
) STRICT;
