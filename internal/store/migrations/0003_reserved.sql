-- 0003: reserved for the artifacts branch (its own 0003 replaces this file
-- at merge). Migrations are numbered without gaps, so the memory branch
-- holds the number with a no-op until then.
SELECT 1;
