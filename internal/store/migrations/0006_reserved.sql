-- 0006: reserved. The gateway branch adds its own 0006 migration; this
-- no-op keeps the numbers contiguous on the memory2 branch (the migrator
-- refuses gaps) and is dropped when the branches are merged.
SELECT 1;
