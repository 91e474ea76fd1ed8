-- Migration 4 (../0004_meta_values.sql) in the partitioned layout. The
-- partition key is named conv_tenant here, not tenant: the list queries
-- join meta_values to conversations and name conversations' columns
-- unqualified.

CREATE TABLE meta_values (
	key         text COLLATE "C" NOT NULL,
	value       text COLLATE "C" NOT NULL,
	conv        bigint NOT NULL,
	conv_tenant text COLLATE "C" NOT NULL,
	PRIMARY KEY (key, value, conv, conv_tenant),
	FOREIGN KEY (conv, conv_tenant) REFERENCES conversations (pk, tenant) ON DELETE CASCADE
) PARTITION BY HASH (conv_tenant);

SELECT convo_partition('meta_values', convo_partitions());

CREATE INDEX meta_values_conv ON meta_values (conv);

CREATE FUNCTION convo_meta_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' THEN
		DELETE FROM meta_values WHERE conv = OLD.pk AND conv_tenant = OLD.tenant;
	END IF;
	IF NEW.meta IS NOT NULL THEN
		INSERT INTO meta_values (key, value, conv, conv_tenant)
		SELECT e.key, e.value #>> '{}', NEW.pk, NEW.tenant FROM jsonb_each(NEW.meta::jsonb) e
		WHERE jsonb_typeof(e.value) = 'string'
			AND octet_length(e.key) <= 256 AND octet_length(e.value #>> '{}') <= 256
		ON CONFLICT DO NOTHING;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER meta_values_added AFTER INSERT ON conversations
	FOR EACH ROW WHEN (NEW.meta IS NOT NULL) EXECUTE FUNCTION convo_meta_written();
CREATE TRIGGER meta_values_changed AFTER UPDATE OF meta ON conversations
	FOR EACH ROW WHEN (OLD.meta IS DISTINCT FROM NEW.meta) EXECUTE FUNCTION convo_meta_written();

INSERT INTO meta_values (key, value, conv, conv_tenant)
SELECT e.key, e.value #>> '{}', c.pk, c.tenant FROM conversations c, jsonb_each(c.meta::jsonb) e
WHERE c.meta IS NOT NULL AND jsonb_typeof(e.value) = 'string'
	AND octet_length(e.key) <= 256 AND octet_length(e.value #>> '{}') <= 256
ON CONFLICT DO NOTHING;
