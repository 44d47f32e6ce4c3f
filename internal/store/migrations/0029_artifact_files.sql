-- 0029: binary artifacts (issue 24): a browser screenshot or a download is
-- kept as an artifact the owner can see, with its media type, a file name
-- to offer and its bytes. A text artifact keeps mime '' and data NULL.
ALTER TABLE artifacts ADD COLUMN mime TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN data BLOB;
