-- 0028: an approval's blast class (issue 23): the effect class of the
-- call it would let run (policy.Reach: 1 read, 2 write, 3 network, 4
-- send), so permissions.totp can ask for a code above a class rather
-- than a risk. 0 on cards stored before: read as the highest class.
ALTER TABLE approvals ADD COLUMN reach INTEGER NOT NULL DEFAULT 0;
