-- 0011: command grants are argv templates. A run_command approval stores
-- the template its Plan would grant (policy.Template as JSON: the program,
-- its hash, the working folder, the parsed argv with path slots), shown on
-- the card before the owner picks a scope; a session or always grant made
-- from it stores the same template and covers only commands that fit it.
-- '' means no template: every other tool, and approvals and grants made
-- before 0011 (such a grant no longer covers any command).
ALTER TABLE approvals ADD COLUMN template TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN template TEXT NOT NULL DEFAULT '';
