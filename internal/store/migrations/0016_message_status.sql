-- 0016: how a tool call ended, kept as a value on its tool message
-- (channel.Status: ran, denied, pending, error), so a front end showing a
-- resumed session reads it instead of parsing the text written for the
-- model. '' on rows stored before this migration.
ALTER TABLE messages ADD COLUMN status TEXT NOT NULL DEFAULT '';
