-- 0023: wrong pairing codes (issue 21), one row each. A wrong `/pair CODE`
-- counts against the account that sent it, never against the code, so a
-- stranger cannot spend the owner's code: an account that sent too many
-- wrong codes since a pairing started is not heard again while it lasts.
-- The same rows give a platform's rate of wrong codes, past which codes
-- are refused unchecked (and nothing is spent) until the rate drops. Only
-- codes that were checked are recorded, so the rate bounds the table;
-- rows are pruned with old pairing codes.
CREATE TABLE chat_pair_wrong (
	id       INTEGER PRIMARY KEY,
	platform TEXT    NOT NULL,
	sender   TEXT    NOT NULL, -- the platform's sender id
	at       INTEGER NOT NULL
) STRICT;

CREATE INDEX chat_pair_wrong_sender ON chat_pair_wrong (platform, sender, at);
CREATE INDEX chat_pair_wrong_at ON chat_pair_wrong (platform, at);
