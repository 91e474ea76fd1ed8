-- The usage index (store.UsageReporter): one row per stored assistant
-- message with usage or a cost, written with the message. at is the
-- message's time (or when it was stored) in microseconds since the Unix
-- epoch, UTC; cost is in nano-dollars, NULL when the message has none
-- (unknown, not zero). tenant is a copy of the conversation's, so a
-- tenant's time range is one index range. A message deleted takes its row
-- with it; a fork's copies get none (the spend happened once).

CREATE TABLE usage (
	conv        bigint NOT NULL,
	pos         bigint NOT NULL,
	tenant      text COLLATE "C" NOT NULL,
	at          bigint NOT NULL,
	model       text COLLATE "C" NOT NULL,
	input       bigint NOT NULL,
	output      bigint NOT NULL,
	cache_read  bigint NOT NULL,
	cache_write bigint NOT NULL,
	reasoning   bigint NOT NULL,
	cost        bigint,
	PRIMARY KEY (conv, pos),
	FOREIGN KEY (conv, pos) REFERENCES messages (conv, pos) ON DELETE CASCADE
);

-- Covering: a tenant's range (or everyone's) is answered from the index.
CREATE INDEX usage_tenant_at ON usage (tenant, at) INCLUDE (model, input, output, cache_read, cache_write, reasoning, cost);
CREATE INDEX usage_at ON usage (at) INCLUDE (tenant, model, input, output, cache_read, cache_write, reasoning, cost);

-- The messages stored before: assistant messages whose body is whole JSON
-- (media stored apart leaves holes; an assistant message rarely has any).
INSERT INTO usage (conv, pos, tenant, at, model, input, output, cache_read, cache_write, reasoning, cost)
SELECT b.conv, b.pos, b.tenant,
	coalesce((extract(epoch FROM (b.j->>'time')::timestamptz) * 1000000)::bigint, (extract(epoch FROM b.created) * 1000000)::bigint),
	coalesce(b.j->'origin'->>'model', ''),
	coalesce((b.j->'usage'->>'input')::bigint, 0), coalesce((b.j->'usage'->>'output')::bigint, 0),
	coalesce((b.j->'usage'->>'cache_read')::bigint, 0), coalesce((b.j->'usage'->>'cache_write')::bigint, 0),
	coalesce((b.j->'usage'->>'reasoning')::bigint, 0),
	((b.j->'cost'->>'usd')::numeric * 1000000000)::bigint
FROM (
	SELECT m.conv, m.pos, c.tenant, c.created, convert_from(m.body, 'UTF8')::jsonb AS j
	FROM messages m JOIN conversations c ON c.pk = m.conv
	WHERE m.role = 'assistant'
		AND (position('"usage":'::bytea IN m.body) > 0 OR position('"cost":'::bytea IN m.body) > 0)
		AND NOT EXISTS (SELECT 1 FROM media_refs r WHERE r.conv = m.conv AND r.pos = m.pos)
) b
WHERE jsonb_typeof(b.j->'usage') = 'object' OR jsonb_typeof(b.j->'cost') = 'object';
