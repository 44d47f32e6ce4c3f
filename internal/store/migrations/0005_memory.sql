-- 0005: the memory projection. The truth is memory/<owner>/memory.md; these
-- tables are rebuilt from it at any time (internal/memory) and may be
-- dropped and refilled without losing anything.

CREATE TABLE memory_units (
	seq        INTEGER PRIMARY KEY, -- also the rowid of the unit's memory_fts row
	owner      TEXT    NOT NULL,
	id         TEXT    NOT NULL,    -- m_…, stable across rebuilds
	kind       TEXT    NOT NULL,
	text       TEXT    NOT NULL,
	source     TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	expires_at INTEGER,             -- NULL: never expires
	UNIQUE (owner, id)
) STRICT;

-- The unit's text as space-separated search terms (memory.Tokens: words,
-- and overlapping bigrams for Chinese, Japanese and Korean). The "ascii"
-- tokenizer splits only on ASCII separators, so each term the Go tokenizer
-- made is exactly one FTS5 token whatever its script. Contentless: the
-- terms are never read back, only matched and ranked (bm25).
CREATE VIRTUAL TABLE memory_fts USING fts5(
	terms,
	content = '',
	contentless_delete = 1,
	tokenize = 'ascii'
);

-- What memory.md looked like when it was last indexed, per owner: a stat
-- (size, modification time) that is cheap to compare before each recall,
-- and the SHA-256 that decides when the stat alone differs.
CREATE TABLE memory_sources (
	owner      TEXT    PRIMARY KEY,
	size       INTEGER NOT NULL, -- -1 when the file did not exist
	mtime      INTEGER NOT NULL, -- unix nanoseconds
	sha256     TEXT    NOT NULL,
	units      INTEGER NOT NULL,
	problems   INTEGER NOT NULL,
	indexed_at INTEGER NOT NULL
) STRICT;
