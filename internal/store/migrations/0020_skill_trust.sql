-- 0020: the skills the owner trusts (issue 15). A skill is a folder under
-- homard's data folder (skills/NAME/); hash is the SHA-256 of its whole tree
-- (paths, executable bits, contents) when the owner last accepted it with
-- `homard skill add` or `homard skill trust`. A skill whose tree no longer
-- has this hash is "changed: needs trust" and offers nothing to the model.
-- The pin lives here, not beside the skill, so whoever can change the
-- skill's files cannot also change what they are checked against.
CREATE TABLE skill_trust (
	name       TEXT    PRIMARY KEY,
	hash       TEXT    NOT NULL CHECK (length(hash) = 64),
	trusted_at INTEGER NOT NULL
) STRICT;
