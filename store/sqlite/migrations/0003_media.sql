-- Inline media stored once (backend.StripMedia): a message body keeps a
-- four-byte hole where each image, audio or file's base64 was, and
-- media_refs says which blob goes at which byte of which message. A blob is
-- the decoded bytes, keyed by their SHA-256, shared by every message of
-- every conversation and tenant that holds the same bytes; it is read only
-- through the references of a message being read. refs counts a blob's
-- references, kept by the triggers in the transaction that adds or removes
-- them: the blob goes with its last reference. Bodies stored before this
-- migration keep their media inline.

CREATE TABLE blobs (
	hash TEXT    PRIMARY KEY, -- hex SHA-256 of data
	refs INTEGER NOT NULL,    -- rows of media_refs naming it
	data BLOB    NOT NULL
) STRICT;

CREATE TABLE media_refs (
	conv INTEGER NOT NULL, -- messages.conv
	pos  INTEGER NOT NULL, -- messages.pos
	off  INTEGER NOT NULL, -- byte of the body where the hole is
	hash TEXT    NOT NULL, -- blobs.hash
	PRIMARY KEY (conv, pos, off)
) STRICT;

CREATE TRIGGER media_ref_added AFTER INSERT ON media_refs BEGIN
	UPDATE blobs SET refs = refs + 1 WHERE hash = new.hash;
END;

CREATE TRIGGER media_ref_removed AFTER DELETE ON media_refs BEGIN
	UPDATE blobs SET refs = refs - 1 WHERE hash = old.hash;
	DELETE FROM blobs WHERE hash = old.hash AND refs <= 0;
END;

-- A message deleted, or its body rewritten (expired content), takes its
-- references with it.
CREATE TRIGGER message_media_deleted AFTER DELETE ON messages BEGIN
	DELETE FROM media_refs WHERE conv = old.conv AND pos = old.pos;
END;

CREATE TRIGGER message_media_rewritten AFTER UPDATE OF body ON messages BEGIN
	DELETE FROM media_refs WHERE conv = old.conv AND pos = old.pos;
END;
