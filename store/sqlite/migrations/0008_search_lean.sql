-- The search index keeps, for each word, only which messages hold it
-- (detail = none), not where in them, and not each message's length in
-- words (columnsize = 0). Search asks for messages holding every word of
-- a query, newest first: it never asks for a phrase, a column, a rank,
-- FTS5's snippet() or highlight() (the snippet is cut in Go from the text
-- the table keeps), so the positions were written with every message and
-- read only for the rare query word the tokenizer splits (below). Without them a commit writes and merges a much smaller
-- index: 6 December 2026, bench/gateway at one stream spent about 134 µs
-- an exchange in the commit, most of it flushing and merging this index.
--
-- Each commit also writes its words as a new segment of the index, which
-- FTS5 merges with others of its level once there are 'automerge' of them
-- (default 4). A recorded exchange is often a commit of its own, so the
-- segments are small and the merges frequent: merging 16 at a time merges
-- each entry about half as often. Searches read up to 16 segments a level
-- rather than 4 (measured, 6 December 2026, on 5,000 exchanges recorded a
-- commit each: a search, a common word's first page or a rare one's,
-- 4.71 million instructions with 4 a level, 4.82 with 16; an exchange
-- recorded, 1.80 million and 1.56).
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

INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 16);
