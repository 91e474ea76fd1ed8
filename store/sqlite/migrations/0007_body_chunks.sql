-- Long message bodies in pieces. A body longer than a piece (1 MiB) is
-- stored in body_chunks, one row per piece in seq order (0, 1, 2…), and
-- messages.body is then empty: a stored body is never empty otherwise (it
-- is a JSON object), so an empty one tells a reader to join the pieces.
-- Each piece is inserted by a statement of its own, binding a piece of the
-- body where it already is: SQLite's C heap, which cannot reuse the Go
-- heap's free pages, then holds one piece at a time rather than the bound
-- copy of the whole body, its record and its pages (2.1-2.4 times the
-- body, measured for a 10-40 MiB body, 6 December 2026). Media offsets
-- (media_refs.off) count bytes of the whole body, the pieces joined.
--
-- SQLite only: PostgreSQL's client (pgx) sends a value from Go memory and
-- keeps no heap of its own, so store/postgres keeps each body whole.
--
-- A migration after this one that reads messages.body must read the
-- pieces of the empty ones too.

CREATE TABLE body_chunks (
	conv INTEGER NOT NULL, -- messages.conv
	pos  INTEGER NOT NULL, -- messages.pos
	seq  INTEGER NOT NULL, -- 0, 1, 2… in the body's order
	data BLOB    NOT NULL,
	PRIMARY KEY (conv, pos, seq)
) STRICT;

-- A message deleted, or its body rewritten whole (expired content), takes
-- its pieces with it. (The triggers do not read old.body: that would read
-- the whole of a long body to delete it.)
CREATE TRIGGER message_chunks_deleted AFTER DELETE ON messages BEGIN
	DELETE FROM body_chunks WHERE conv = old.conv AND pos = old.pos;
END;

CREATE TRIGGER message_chunks_rewritten AFTER UPDATE OF body ON messages BEGIN
	DELETE FROM body_chunks WHERE conv = old.conv AND pos = old.pos;
END;
