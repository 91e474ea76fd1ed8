-- Full-text search over message text (store.Store.Search). The index holds
-- each message's searchable text (backend.SearchText); its rowid is the
-- message's key, conv << 32 | pos, so a message's entry is found without a
-- join and a conversation's entries are one rowid range. Messages without
-- text have no entry.

CREATE VIRTUAL TABLE messages_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 0');

INSERT INTO messages_fts (rowid, text)
	SELECT conv << 32 | pos, convo_search_text(body) FROM messages WHERE convo_search_text(body) <> '';
