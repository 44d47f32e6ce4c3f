-- 0032: the weekly memory review (internal/memreview). One review holds
-- the proposals one pass over the owner's memory made (merge duplicates,
-- delete a stale or contradicted note, replace one with a resolved text);
-- each waits for the owner and changes memory.md only when approved. A
-- proposal is bound to the texts of the units it was made from (bound):
-- a hand edit since then makes it stale, never applied. The last weekly
-- slot run is kept per owner so that a restart does not run it twice.
-- Texts are checked for secrets before they are written here.

CREATE TABLE memory_reviews (
	id         TEXT    PRIMARY KEY, -- rv_…
	owner      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,    -- unix nanoseconds
	status     TEXT    NOT NULL CHECK (status IN ('open', 'closed')),
	dropped    INTEGER NOT NULL DEFAULT 0 -- the model's proposals that failed the checks
) STRICT;

CREATE INDEX memory_reviews_owner ON memory_reviews (owner, status, created_at);

CREATE TABLE memory_review_proposals (
	review_id TEXT    NOT NULL REFERENCES memory_reviews (id) ON DELETE CASCADE,
	n         INTEGER NOT NULL,    -- 1, 2, … in the review
	action    TEXT    NOT NULL CHECK (action IN ('merge', 'delete', 'replace')),
	ids       TEXT    NOT NULL,    -- the unit ids it touches, space-separated
	text      TEXT    NOT NULL,    -- the merged or replacing text ('' for delete)
	reason    TEXT    NOT NULL,
	bound     TEXT    NOT NULL,    -- sha256 of the units' texts it was made from
	status    TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'dismissed', 'stale')),
	PRIMARY KEY (review_id, n)
) STRICT;

CREATE TABLE memory_review_slots (
	owner TEXT    PRIMARY KEY,
	slot  INTEGER NOT NULL -- unix nanoseconds of the last weekly slot run
) STRICT;
