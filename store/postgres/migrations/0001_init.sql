-- Conversations and their messages. A message's body is its canonical JSON
-- (convo.AppendMessage); id and role are copies of its fields for lookups.
-- Ids compare bytewise (COLLATE "C"), as in the SQLite backend.

CREATE TABLE conversations (
	pk          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tenant      text COLLATE "C" NOT NULL,
	id          text COLLATE "C" NOT NULL,
	title       text        NOT NULL,
	meta        text,                 -- a compacted JSON object, or NULL
	version     bigint      NOT NULL, -- 1 when created, +1 per Append or DeleteMessage
	messages    integer     NOT NULL, -- how many rows messages holds for it
	next_pos    bigint      NOT NULL, -- the pos of the next message appended
	open_calls  text,                 -- JSON [{"id","name"}] of unanswered tool calls, or NULL
	forked_from text        NOT NULL,
	forked_at   integer     NOT NULL,
	created     timestamptz NOT NULL,
	updated     timestamptz NOT NULL,
	CONSTRAINT conversations_tenant_id UNIQUE (tenant, id)
);

-- List: a tenant's conversations, newest first.
CREATE INDEX conversations_list ON conversations (tenant, created DESC, id DESC);

CREATE TABLE messages (
	conv bigint NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	pos  bigint NOT NULL, -- increasing in conversation order, with gaps after deletions
	id   text COLLATE "C" NOT NULL,
	role text   NOT NULL,
	body bytea  NOT NULL,
	PRIMARY KEY (conv, pos),
	CONSTRAINT messages_conv_id UNIQUE (conv, id)
);
