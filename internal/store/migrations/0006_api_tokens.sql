-- 0006: bearer tokens for the HTTP API (`homard token create`). Only the
-- SHA-256 of a token's secret part is kept: the token itself is shown
-- once, when it is made, and cannot be read back from here. A revoked
-- token keeps its row (revoked_at set) so `homard token list` can say so.

CREATE TABLE api_tokens (
	id           TEXT    PRIMARY KEY,
	name         TEXT    NOT NULL,
	secret_hash  BLOB    NOT NULL CHECK (length(secret_hash) = 32), -- SHA-256 of the secret part
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,  -- NULL until first used
	revoked_at   INTEGER   -- NULL while valid
) STRICT;
