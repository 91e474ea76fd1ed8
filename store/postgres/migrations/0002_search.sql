-- Full-text search over message text (store.Store.Search). text is the
-- message's searchable text (backend.SearchText), kept for snippets; words
-- is the tsvector of its words, lower-cased letters and digits split as
-- every backend splits them, under a GIN index. Rows stored before this
-- migration are filled in by the store when it applies it.

ALTER TABLE messages ADD COLUMN text text NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN words tsvector NOT NULL DEFAULT ''::tsvector;
CREATE INDEX messages_search ON messages USING GIN (words);
