-- 0031: where a task came from (issue 26): 'cli' (homard task add),
-- 'web' (the web UI's tasks page, POST /api/tasks) or 'chat' (proposed in
-- a conversation and approved on its card, or a reminder snoozed from a
-- chat). Bookkeeping shown beside the task, like its name: it is not in
-- the sealed body, so no seal changes, and a task added before this
-- migration reads 'cli', the only way to add one then.
ALTER TABLE tasks ADD COLUMN origin TEXT NOT NULL DEFAULT 'cli' CHECK (origin IN ('cli', 'web', 'chat'));
