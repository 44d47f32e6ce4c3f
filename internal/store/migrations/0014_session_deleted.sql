-- 0014: deleting a session. DeleteSession removes a session's
-- conversation (turns, messages, summary) and sets deleted_at; the row
-- itself stays, because approvals, grants and tool runs refer to it and the
-- audit chain names it. A deleted session is not listed. Using its id
-- again (EnsureSession) clears deleted_at: a new conversation under the
-- old name, with none of the old history.
ALTER TABLE sessions ADD COLUMN deleted_at INTEGER;
