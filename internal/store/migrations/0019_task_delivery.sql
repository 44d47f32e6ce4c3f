-- 0019: scheduled tasks' notices and deliveries (issue 14). warned_at is
-- when the owner was told the task's approval ends soon (NULL: not yet for
-- this approval; an approval or renewal clears it). A run's delivery is
-- where its summary went: '' (not delivered: it has none yet, or the run
-- never started), 'web' (shown in the web UI and `homard task runs`), or
-- a chat platform, with outbox_id the chat_outbox row that carries it, so
-- the outbox's own state (queued, sent, failed and why) is the delivery's.
-- A chat owner's chat_id is the direct chat they paired in, where homard
-- sends what no message of theirs started (a task's result); '' for an
-- owner paired before this migration (pair again, or homard falls back to
-- their latest direct message).
ALTER TABLE tasks ADD COLUMN warned_at INTEGER;
ALTER TABLE task_runs ADD COLUMN delivery TEXT NOT NULL DEFAULT '';
ALTER TABLE task_runs ADD COLUMN outbox_id INTEGER;
ALTER TABLE chat_owners ADD COLUMN chat_id TEXT NOT NULL DEFAULT '';
-- The scheduler's once-a-minute look for approvals ending soon
-- (TasksExpiring): partial, so a task already warned, pending or removed
-- costs nothing.
CREATE INDEX tasks_expiring ON tasks (expires_at) WHERE warned_at IS NULL AND status IN ('active', 'paused');
