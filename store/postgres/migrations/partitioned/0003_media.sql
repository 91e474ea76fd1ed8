-- Migration 3 (../0003_media.sql) in the partitioned layout: blobs are
-- shared by every tenant holding the same bytes, so they are not split by
-- tenant; media_refs carries the tenant of its message and is partitioned
-- like it.

CREATE TABLE blobs (
	hash text COLLATE "C" PRIMARY KEY,
	refs bigint NOT NULL,
	data bytea  NOT NULL
);

CREATE TABLE media_refs (
	conv   bigint NOT NULL,
	pos    bigint NOT NULL,
	off    integer NOT NULL,
	hash   text COLLATE "C" NOT NULL,
	tenant text COLLATE "C" NOT NULL,
	PRIMARY KEY (conv, pos, off, tenant),
	FOREIGN KEY (conv, pos, tenant) REFERENCES messages (conv, pos, tenant) ON DELETE CASCADE
) PARTITION BY HASH (tenant);

SELECT convo_partition('media_refs', convo_partitions());

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

CREATE FUNCTION convo_message_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM media_refs WHERE conv = OLD.conv AND pos = OLD.pos AND tenant = OLD.tenant;
	RETURN NULL;
END $$;

CREATE TRIGGER media_ref_added AFTER INSERT ON media_refs FOR EACH ROW EXECUTE FUNCTION convo_media_ref_added();
CREATE TRIGGER media_ref_removed AFTER DELETE ON media_refs FOR EACH ROW EXECUTE FUNCTION convo_media_ref_removed();
CREATE TRIGGER message_media_rewritten AFTER UPDATE OF body ON messages FOR EACH ROW EXECUTE FUNCTION convo_message_rewritten();
