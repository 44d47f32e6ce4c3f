-- What a call changed (a command's applied or held change set), one line
-- per path; empty for every other record. Covered by the record's hash
-- when not empty (audit.Sum).
ALTER TABLE audit ADD COLUMN effects TEXT NOT NULL DEFAULT '';
