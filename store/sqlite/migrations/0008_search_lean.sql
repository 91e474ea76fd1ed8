-- The search index keeps, for each word, only which messages hold it
-- (detail = none), not where in them, and not each message's length in
-- words (columnsize = 0). Search asks for messages holding every word of
-- a query, newest first: it never asks for a phrase, a column, a rank,
-- FTS5's snippet() or highlight() (the snippet is cut in Go from the text
-- the table keeps), so the positions were written with every message and
-- never read. Without them a commit writes and merges a much smaller
-- index: 6 December 2026, bench/gateway at one stream spent about 134 µs
-- an exchange in the commit, most of it flushing and merging this index.
--
-- A query word that the tokenizer (unicode61) splits in more than one
-- token, which would be a phrase query, is searched as its tokens and
-- the hits then checked against the words of their text (Store.Search).
--
-- The entries are copied from the old table, whose text is the indexed
-- text of each message (bodies stored in pieces, migration 7, are not
-- read): same rowids, same text, same tokenizer.

CREATE VIRTUAL TABLE messages_fts_lean USING fts5 (text, tokenize = 'unicode61 remove_diacritics 0', detail = none, columnsize = 0);

INSERT INTO messages_fts_lean (rowid, text) SELECT rowid, text FROM messages_fts;

DROP TABLE messages_fts;

ALTER TABLE messages_fts_lean RENAME TO messages_fts;
