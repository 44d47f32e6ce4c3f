-- 0025: TOTP second factor (issue 23). One authenticator per owner: its
-- secret sealed with AES-256-GCM under a key derived from the vault key
-- (secrets.DerivedKey("totp")), so a copy of the database alone cannot
-- compute codes. "pending" until the owner typed a first code from the
-- app; "active" after. totp_used keeps every time step a code was
-- accepted for, so a code is never accepted twice and never for an older
-- step than one already used; totp_wrong keeps wrong codes, to stop
-- guessing.
CREATE TABLE totp (
	owner        TEXT    PRIMARY KEY,
	nonce        BLOB    NOT NULL,
	box          BLOB    NOT NULL,
	state        TEXT    NOT NULL CHECK (state IN ('pending', 'active')),
	created_at   INTEGER NOT NULL,
	activated_at INTEGER
) STRICT;

CREATE TABLE totp_used (
	owner TEXT    NOT NULL,
	step  INTEGER NOT NULL,
	at    INTEGER NOT NULL,
	PRIMARY KEY (owner, step)
) STRICT;

CREATE TABLE totp_wrong (
	id    INTEGER PRIMARY KEY,
	owner TEXT    NOT NULL,
	at    INTEGER NOT NULL
) STRICT;

CREATE INDEX totp_wrong_owner ON totp_wrong (owner, at);
