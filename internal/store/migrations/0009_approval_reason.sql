-- 0009: why an approval was asked. The rule and reason of the policy
-- decision that asked (e.g. mode.safe, "safe mode asks before anything but
-- a read-only low-risk action"), redacted, shown on every card so the owner
-- knows why homard is asking. Approvals created before 0009 have ''.
ALTER TABLE approvals ADD COLUMN rule TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN reason TEXT NOT NULL DEFAULT '';
