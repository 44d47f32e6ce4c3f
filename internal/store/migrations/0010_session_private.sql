-- 0010: whether a session's context holds the owner's private data.
-- private_since is when a tool whose result may hold it (a file, command
-- output, memory) first ran in the session, or when recalled memory was
-- first shown to its model; NULL while the session has seen only the clock
-- and the public web. It is set once and never cleared: the session's
-- stored history, replayed to the model on every later turn, still holds
-- what was read. The arbiter asks before an outbound request from a
-- private session (policy rule taint.private-egress).
ALTER TABLE sessions ADD COLUMN private_since INTEGER;
