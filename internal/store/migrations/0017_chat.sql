-- 0017: chat channels (issue 13; docs/CHANNELS.md). The inbox saves each
-- delivery before the adapter acknowledges it, keyed by what the platform
-- calls it, so a redelivery (now or after a restart) is handled once. The
-- outbox holds one row per reply part until the platform took it. Owners
-- are rows made by pairing, never config lines. Text kept here is
-- redacted.

CREATE TABLE chat_inbox (
	id          INTEGER PRIMARY KEY, -- arrival order
	platform    TEXT    NOT NULL,
	bot         TEXT    NOT NULL,
	delivery_id TEXT    NOT NULL,
	kind        TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	sender_id   TEXT    NOT NULL,
	payload     TEXT    NOT NULL, -- JSON of the delivery, text redacted
	state       TEXT    NOT NULL CHECK (state IN ('received', 'running', 'handled', 'ignored', 'interrupted')),
	note        TEXT    NOT NULL DEFAULT '', -- why it was ignored
	received_at INTEGER NOT NULL,
	UNIQUE (platform, bot, delivery_id)
) STRICT;
-- The dispatcher reads received rows in order; pruning goes by age.
CREATE INDEX chat_inbox_state ON chat_inbox (state, id);
CREATE INDEX chat_inbox_received ON chat_inbox (received_at);

CREATE TABLE chat_outbox (
	id          INTEGER PRIMARY KEY, -- send order; Outbound.Key
	platform    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	text        TEXT    NOT NULL,
	buttons     TEXT    NOT NULL DEFAULT '[]', -- JSON [{label, data}]
	reply_to    TEXT    NOT NULL DEFAULT '',
	part        INTEGER NOT NULL DEFAULT 1,
	parts       INTEGER NOT NULL DEFAULT 1,
	state       TEXT    NOT NULL CHECK (state IN ('queued', 'sending', 'sent', 'failed')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     INTEGER NOT NULL,
	message_id  TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '', -- never the text
	created_at  INTEGER NOT NULL,
	sent_at     INTEGER
) STRICT;
CREATE INDEX chat_outbox_state ON chat_outbox (state, id);

CREATE TABLE chat_owners (
	platform  TEXT    NOT NULL,
	user_id   TEXT    NOT NULL,
	name      TEXT    NOT NULL DEFAULT '', -- display name when paired (untrusted)
	paired_at INTEGER NOT NULL,
	confirmed INTEGER NOT NULL DEFAULT 1,
	PRIMARY KEY (platform, user_id)
) STRICT;

-- One-time pairing codes (`homard pair`): only the SHA-256 of the code.
CREATE TABLE chat_pairings (
	id         INTEGER PRIMARY KEY,
	platform   TEXT    NOT NULL,
	code_hash  BLOB    NOT NULL UNIQUE CHECK (length(code_hash) = 32),
	state      TEXT    NOT NULL CHECK (state IN ('open', 'used', 'confirmed', 'refused', 'exhausted')),
	tries      INTEGER NOT NULL DEFAULT 0,
	used_by    TEXT    NOT NULL DEFAULT '',
	used_name  TEXT    NOT NULL DEFAULT '',
	used_chat  TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;

-- The session each chat's turns run in (`/new` starts another).
CREATE TABLE chat_sessions (
	platform TEXT NOT NULL,
	chat_id  TEXT NOT NULL,
	session  TEXT NOT NULL,
	PRIMARY KEY (platform, chat_id)
) STRICT;

-- Approval cards sent to an owner's direct chat; the card's message id is
-- its outbox row's, once sent.
CREATE TABLE chat_cards (
	approval_id TEXT    PRIMARY KEY,
	platform    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	outbox_id   INTEGER NOT NULL REFERENCES chat_outbox(id),
	hash_prefix TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('open', 'answered', 'closed')),
	created_at  INTEGER NOT NULL
) STRICT;

-- What homard knows about a chat: allowed groups (`homard channel allow`),
-- the group it left, the last "this bot is private" notice.
CREATE TABLE chat_chats (
	platform  TEXT    NOT NULL,
	chat_id   TEXT    NOT NULL,
	allowed   INTEGER NOT NULL DEFAULT 0,
	left_at   INTEGER,
	notice_at INTEGER,
	PRIMARY KEY (platform, chat_id)
) STRICT;

-- Each channel's state as `homard serve` last saw it (`homard channel list`).
CREATE TABLE chat_channels (
	platform   TEXT    PRIMARY KEY,
	bot_id     TEXT    NOT NULL DEFAULT '',
	bot_name   TEXT    NOT NULL DEFAULT '',
	state      TEXT    NOT NULL,
	last_error TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL
) STRICT;
