-- Conversations and their messages. Times are microseconds since the Unix
-- epoch, UTC. A message's body is its canonical JSON (convo.AppendMessage);
-- id and role are copies of its fields for lookups.

CREATE TABLE conversations (
	pk          INTEGER PRIMARY KEY,
	tenant      TEXT    NOT NULL,
	id          TEXT    NOT NULL,
	title       TEXT    NOT NULL,
	meta        TEXT,             -- a compacted JSON object, or NULL
	version     INTEGER NOT NULL, -- 1 when created, +1 per Append or DeleteMessage
	messages    INTEGER NOT NULL, -- how many rows messages holds for it
	next_pos    INTEGER NOT NULL, -- the pos of the next message appended
	open_calls  TEXT,             -- JSON [{"id","name"}] of unanswered tool calls, or NULL
	forked_from TEXT    NOT NULL,
	forked_at   INTEGER NOT NULL,
	created     INTEGER NOT NULL,
	updated     INTEGER NOT NULL,
	UNIQUE (tenant, id)
) STRICT;

-- List: a tenant's conversations, newest first.
CREATE INDEX conversations_list ON conversations (tenant, created DESC, id DESC);

CREATE TABLE messages (
	conv INTEGER NOT NULL, -- conversations.pk
	pos  INTEGER NOT NULL, -- increasing in conversation order, with gaps after deletions
	id   TEXT    NOT NULL,
	role TEXT    NOT NULL,
	body BLOB    NOT NULL,
	PRIMARY KEY (conv, pos),
	UNIQUE (conv, id)
) STRICT;
