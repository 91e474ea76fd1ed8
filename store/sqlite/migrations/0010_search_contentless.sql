-- The search index no longer keeps a copy of each message's text: it is
-- contentless (content = ''), and forgets a message's entry when told its
-- rowid (contentless_delete = 1, which needs the table of each row's size
-- in words that columnsize = 0 had done without). The text was written
-- twice, in the message's body and in the index's own table, and read
-- only for a hit's snippet and to index a fork's copies; both now derive
-- it from the body (backend.SearchText), as the entry was made.
--
-- Except for a body stored in pieces (migration 7): reading one whole to
-- find its text would hold it all in memory, which the pieces are there
-- to avoid. Its text (at most store.MaxSearchTextBytes) is kept in
-- long_texts, and goes with the message as its pieces do.
--
-- The entries are copied from the old table: same rowids, same text, same
-- tokenizer and the same merging of segments (migration 8).

CREATE TABLE long_texts (
	conv INTEGER NOT NULL, -- messages.conv
	pos  INTEGER NOT NULL, -- messages.pos
	text TEXT    NOT NULL,
	PRIMARY KEY (conv, pos)
) STRICT;

CREATE TRIGGER message_long_text_deleted AFTER DELETE ON messages BEGIN
	DELETE FROM long_texts WHERE conv = old.conv AND pos = old.pos;
END;

CREATE TRIGGER message_long_text_rewritten AFTER UPDATE OF body ON messages BEGIN
	DELETE FROM long_texts WHERE conv = old.conv AND pos = old.pos;
END;

INSERT INTO long_texts (conv, pos, text)
	SELECT m.conv, m.pos, f.text FROM messages m JOIN messages_fts f ON f.rowid = (m.conv << 32 | m.pos)
	WHERE length(m.body) = 0;

CREATE VIRTUAL TABLE messages_fts_contentless USING fts5 (text, tokenize = 'unicode61 remove_diacritics 0', detail = none, content = '', contentless_delete = 1);

INSERT INTO messages_fts_contentless (rowid, text) SELECT rowid, text FROM messages_fts;

DROP TABLE messages_fts;

ALTER TABLE messages_fts_contentless RENAME TO messages_fts;

INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 16);
