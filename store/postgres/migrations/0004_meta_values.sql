-- An index of metadata: each conversation's top-level string members
-- (of at most 256 bytes, key and value alike), kept by triggers whenever a
-- conversation's meta is written. A List whose filter has such a member
-- reads the conversations that have it instead of every conversation of
-- the tenant; the filter is still checked whole on each, so this is only
-- ever a shortcut.

CREATE TABLE meta_values (
	key   text COLLATE "C" NOT NULL,
	value text COLLATE "C" NOT NULL,
	conv  bigint NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	PRIMARY KEY (key, value, conv)
);

CREATE INDEX meta_values_conv ON meta_values (conv);

CREATE FUNCTION convo_meta_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' THEN
		DELETE FROM meta_values WHERE conv = OLD.pk;
	END IF;
	IF NEW.meta IS NOT NULL THEN
		INSERT INTO meta_values (key, value, conv)
		SELECT e.key, e.value #>> '{}', NEW.pk FROM jsonb_each(NEW.meta::jsonb) e
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

INSERT INTO meta_values (key, value, conv)
SELECT e.key, e.value #>> '{}', c.pk FROM conversations c, jsonb_each(c.meta::jsonb) e
WHERE c.meta IS NOT NULL AND jsonb_typeof(e.value) = 'string'
	AND octet_length(e.key) <= 256 AND octet_length(e.value #>> '{}') <= 256
ON CONFLICT DO NOTHING;
