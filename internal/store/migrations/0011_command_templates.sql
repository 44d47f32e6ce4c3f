-- 0011: PLACEHOLDER on branch wip-hygiene so that 0012 applies in order.
-- The real 0011_command_templates.sql comes from another branch; on merge,
-- take that branch's file and drop this one.
SELECT 1;
