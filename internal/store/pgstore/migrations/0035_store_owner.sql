-- 0035: whose store this is (issue 27 point 2). A shared store (a
-- PostgreSQL schema) holds one owner's data: the first homard to open it
-- records its owner, and a homard of another owner is refused — owners
-- get a schema each, which the database keeps apart. SQLite homes record
-- nothing here (a file is its home's).
CREATE TABLE store_owner (
	id         BIGINT  PRIMARY KEY CHECK (id = 1),
	owner      TEXT    NOT NULL CHECK (owner <> ''),
	claimed_at BIGINT  NOT NULL
);
