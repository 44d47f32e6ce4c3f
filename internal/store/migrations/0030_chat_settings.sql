-- 0030: what an owner set in one chat with /budget and /tools (issue 25):
-- a cap on each next turn's tool calls (0: agent.max_calls alone) and
-- turns with no tool offered, for a chat that relays text nobody checked.
-- Kept across restarts: a "tools off" that a restart lifted silently
-- would turn the tools back on behind the owner's back.
CREATE TABLE chat_settings (
	platform  TEXT    NOT NULL,
	chat_id   TEXT    NOT NULL,
	max_calls INTEGER NOT NULL DEFAULT 0 CHECK (max_calls BETWEEN 0 AND 1000),
	tools_off INTEGER NOT NULL DEFAULT 0 CHECK (tools_off IN (0, 1)),
	PRIMARY KEY (platform, chat_id)
) STRICT;
