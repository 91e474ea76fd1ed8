-- An index of metadata: each conversation's top-level string members
-- (of at most 256 bytes, key and value alike), kept by triggers whenever a
-- conversation's meta is written. A List whose filter has such a member
-- reads the conversations that have it instead of every conversation of
-- the tenant; the filter is still checked whole on each, so this is only
-- ever a shortcut.

CREATE TABLE meta_values (
	key   TEXT    NOT NULL,
	value TEXT    NOT NULL,
	conv  INTEGER NOT NULL, -- conversations.pk
	PRIMARY KEY (key, value, conv)
) STRICT, WITHOUT ROWID;

CREATE INDEX meta_values_conv ON meta_values (conv);

CREATE TRIGGER meta_values_added AFTER INSERT ON conversations WHEN new.meta IS NOT NULL BEGIN
	INSERT OR IGNORE INTO meta_values (key, value, conv)
	SELECT key, value, new.pk FROM json_each(new.meta)
	WHERE type = 'text' AND length(CAST(key AS BLOB)) <= 256 AND length(CAST(value AS BLOB)) <= 256;
END;

CREATE TRIGGER meta_values_changed AFTER UPDATE OF meta ON conversations WHEN new.meta IS NOT old.meta BEGIN
	DELETE FROM meta_values WHERE conv = old.pk;
	INSERT OR IGNORE INTO meta_values (key, value, conv)
	SELECT key, value, new.pk FROM json_each(new.meta)
	WHERE new.meta IS NOT NULL AND type = 'text' AND length(CAST(key AS BLOB)) <= 256 AND length(CAST(value AS BLOB)) <= 256;
END;

CREATE TRIGGER meta_values_removed AFTER DELETE ON conversations BEGIN
	DELETE FROM meta_values WHERE conv = old.pk;
END;

INSERT OR IGNORE INTO meta_values (key, value, conv)
SELECT j.key, j.value, c.pk FROM conversations c, json_each(c.meta) j
WHERE c.meta IS NOT NULL AND j.type = 'text' AND length(CAST(j.key AS BLOB)) <= 256 AND length(CAST(j.value AS BLOB)) <= 256;
