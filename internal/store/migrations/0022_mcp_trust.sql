-- 0022: MCP servers the owner trusted (issue 15). One row per configured
-- server name: the fingerprint of the tool list and instructions the owner
-- saw and accepted with `homard mcp trust` (mcp.Fingerprint, "sha256:…"),
-- and what they were, kept so that a changed server can be shown against
-- what was trusted. A server whose current fingerprint differs offers no
-- tools until trusted again; trusting again replaces the row.
CREATE TABLE mcp_trust (
	server       TEXT    PRIMARY KEY CHECK (server <> ''),
	fingerprint  TEXT    NOT NULL CHECK (fingerprint LIKE 'sha256:%'),
	tools_json   TEXT    NOT NULL,
	instructions TEXT    NOT NULL,
	trusted_at   INTEGER NOT NULL,
	-- the last changed fingerprint recorded in the audit log, so a rug pull
	-- is audited once, not at every start; '' until one is seen
	changed_seen TEXT    NOT NULL DEFAULT ''
) STRICT;
