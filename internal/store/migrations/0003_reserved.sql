-- 0003: reserved. Another branch (artifacts) adds the real migration 0003;
-- the loader wants numbers without gaps, so this placeholder holds the
-- number on the compaction branch. DELETE THIS FILE WHEN MERGING: if both
-- files are present, Open fails with "want number 4".
SELECT 1;
