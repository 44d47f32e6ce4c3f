-- 0036: the run and turn locks of this store's processes (issue 27): one
-- row per lock held, naming the session that holds it (pgstore's
-- runLocks). A lock on a table of the store's own schema is one only the
-- store's role can take; the advisory locks used before were one space
-- for every role of the database. A row whose session has ended is free.
-- UNLOGGED: no lock outlives a server crash, which ends every session,
-- so the rows need no WAL (and a taking's commit waits for no flush).
CREATE UNLOGGED TABLE held_locks (
	name          TEXT        PRIMARY KEY,
	pid           INTEGER     NOT NULL,
	backend_start TIMESTAMPTZ NOT NULL
);
