-- 0004: reserved for the compaction branch (its own 0004 replaces this file
-- at merge). Migrations are numbered without gaps, so the memory branch
-- holds the number with a no-op until then.
SELECT 1;
