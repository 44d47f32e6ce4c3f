-- 0026: blast ceilings (issue 23). refused lists the calls homard refused
-- during a task run, one per line ("tool: reason (rule id)"): a call above
-- the task's ceiling is denied, never asked, and the run goes on, so the
-- run's record is where the owner sees it (`homard task runs`). '' when
-- nothing was refused, and for runs before this migration.
ALTER TABLE task_runs ADD COLUMN refused TEXT NOT NULL DEFAULT '';
