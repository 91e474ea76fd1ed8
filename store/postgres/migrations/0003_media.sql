-- Inline media stored once (backend.StripMedia): a message body keeps a
-- four-byte hole where each image, audio or file's base64 was, and
-- media_refs says which blob goes at which byte of which message. A blob is
-- the decoded bytes, keyed by their SHA-256, shared by every message of
-- every conversation and tenant that holds the same bytes; it is read only
-- through the references of a message being read. refs counts a blob's
-- references, kept by the triggers in the transaction that adds or removes
-- them: the blob goes with its last reference. A writer locks the blobs it
-- references (INSERT … ON CONFLICT DO UPDATE) before adding references, so
-- a concurrent last delete cannot remove a blob being referenced. Bodies
-- stored before this migration keep their media inline.

CREATE TABLE blobs (
	hash text COLLATE "C" PRIMARY KEY, -- hex SHA-256 of data
	refs bigint NOT NULL,              -- rows of media_refs naming it
	data bytea  NOT NULL
);

CREATE TABLE media_refs (
	conv bigint NOT NULL,
	pos  bigint NOT NULL,
	off  integer NOT NULL,          -- byte of the body where the hole is
	hash text COLLATE "C" NOT NULL, -- blobs.hash
	PRIMARY KEY (conv, pos, off),
	FOREIGN KEY (conv, pos) REFERENCES messages (conv, pos) ON DELETE CASCADE
);

CREATE FUNCTION convo_media_ref_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE blobs SET refs = refs + 1 WHERE hash = NEW.hash;
	RETURN NULL;
END $$;

CREATE FUNCTION convo_media_ref_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE blobs SET refs = refs - 1 WHERE hash = OLD.hash;
	DELETE FROM blobs WHERE hash = OLD.hash AND refs <= 0;
	RETURN NULL;
END $$;

-- A message whose body is rewritten (expired content) drops its references.
CREATE FUNCTION convo_message_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM media_refs WHERE conv = OLD.conv AND pos = OLD.pos;
	RETURN NULL;
END $$;

CREATE TRIGGER media_ref_added AFTER INSERT ON media_refs FOR EACH ROW EXECUTE FUNCTION convo_media_ref_added();
CREATE TRIGGER media_ref_removed AFTER DELETE ON media_refs FOR EACH ROW EXECUTE FUNCTION convo_media_ref_removed();
CREATE TRIGGER message_media_rewritten AFTER UPDATE OF body ON messages FOR EACH ROW EXECUTE FUNCTION convo_message_rewritten();
