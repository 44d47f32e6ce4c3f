-- 0027: recipient trust (issue 23). The people and chats the owner has
-- confirmed a message may go to: a send_message to anyone else always
-- asks, in every mode, and approving that card confirms the recipient
-- for later sends. The owner's own paired chats need no row.
CREATE TABLE recipients (
	owner        TEXT    NOT NULL,
	platform     TEXT    NOT NULL,
	chat         TEXT    NOT NULL,
	confirmed_at INTEGER NOT NULL,
	PRIMARY KEY (owner, platform, chat)
) STRICT;
