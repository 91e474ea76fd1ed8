-- Migration 5 (../0005_usage.sql) in the partitioned layout: the same
-- table, its keys naming the tenant it already holds, partitioned by it.

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
	PRIMARY KEY (conv, pos, tenant),
	FOREIGN KEY (conv, pos, tenant) REFERENCES messages (conv, pos, tenant) ON DELETE CASCADE
) PARTITION BY HASH (tenant);

SELECT convo_partition('usage', convo_partitions());

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
	FROM messages m JOIN conversations c ON c.pk = m.conv AND c.tenant = m.tenant
	WHERE m.role = 'assistant'
		AND (position('"usage":'::bytea IN m.body) > 0 OR position('"cost":'::bytea IN m.body) > 0)
		AND NOT EXISTS (SELECT 1 FROM media_refs r WHERE r.conv = m.conv AND r.pos = m.pos AND r.tenant = m.tenant)
) b
WHERE jsonb_typeof(b.j->'usage') = 'object' OR jsonb_typeof(b.j->'cost') = 'object';
