-- 0036: the run and turn locks of a shared store's processes (issue 27),
-- held as rows on PostgreSQL (pgstore's runLocks). A SQLite home's locks
-- are the kernel's (runlock.go): the table stays empty here, and exists so
-- that both engines have one schema (TestSchemasMatch).
CREATE TABLE held_locks (
	name          TEXT    PRIMARY KEY,
	pid           INTEGER NOT NULL,
	backend_start TEXT    NOT NULL
) STRICT;
