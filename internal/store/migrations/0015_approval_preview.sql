-- 0014: an approval keeps the preview its card shows (tool.Plan.Preview:
-- a write's unified diff, a command's argv, a fetch's URL), redacted and
-- cut at 1 MiB, so `homard approval show ID --full` and the web UI show
-- what was approved after the Plan is gone. It is display, like display:
-- plan_hash binds the plan, never the preview. '' for approvals made
-- before 0014.
ALTER TABLE approvals ADD COLUMN preview TEXT NOT NULL DEFAULT '';
