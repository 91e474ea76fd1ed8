-- The usage index (store.UsageReporter): one row per stored assistant
-- message with usage or a cost, written with the message. at is the
-- message's time (or when it was stored), microseconds since the Unix
-- epoch, UTC; cost is in nano-dollars, NULL when the message has none
-- (unknown, not zero). tenant is a copy of the conversation's, so a
-- tenant's time range is one index range. A message deleted takes its row
-- with it; a fork's copies get none (the spend happened once).

CREATE TABLE usage (
	conv        INTEGER NOT NULL, -- messages.conv
	pos         INTEGER NOT NULL, -- messages.pos
	tenant      TEXT    NOT NULL,
	at          INTEGER NOT NULL,
	model       TEXT    NOT NULL,
	input       INTEGER NOT NULL,
	output      INTEGER NOT NULL,
	cache_read  INTEGER NOT NULL,
	cache_write INTEGER NOT NULL,
	reasoning   INTEGER NOT NULL,
	cost        INTEGER,
	PRIMARY KEY (conv, pos)
) STRICT;

-- Covering: a tenant's range (or everyone's) is answered from the index.
CREATE INDEX usage_tenant_at ON usage (tenant, at, model, input, output, cache_read, cache_write, reasoning, cost);
CREATE INDEX usage_at ON usage (at, tenant, model, input, output, cache_read, cache_write, reasoning, cost);

CREATE TRIGGER message_usage_deleted AFTER DELETE ON messages BEGIN
	DELETE FROM usage WHERE conv = old.conv AND pos = old.pos;
END;

-- The messages stored before: those whose body is whole JSON (media
-- stored apart leaves holes; an assistant message rarely has any).
INSERT INTO usage (conv, pos, tenant, at, model, input, output, cache_read, cache_write, reasoning, cost)
SELECT m.conv, m.pos, c.tenant,
	-- the time as written (RFC 3339, UTC, "…:SS[.fraction]Z"), to the microsecond
	coalesce(unixepoch(json_extract(b.j, '$.time')) * 1000000 +
		CASE WHEN substr(json_extract(b.j, '$.time'), 20, 1) = '.' THEN
			CAST(substr(substr(json_extract(b.j, '$.time'), 21, length(json_extract(b.j, '$.time')) - 21) || '000000', 1, 6) AS INTEGER)
		ELSE 0 END, c.created),
	coalesce(json_extract(b.j, '$.origin.model'), ''),
	coalesce(json_extract(b.j, '$.usage.input'), 0), coalesce(json_extract(b.j, '$.usage.output'), 0),
	coalesce(json_extract(b.j, '$.usage.cache_read'), 0), coalesce(json_extract(b.j, '$.usage.cache_write'), 0),
	coalesce(json_extract(b.j, '$.usage.reasoning'), 0),
	-- the decimal string, exactly: whole dollars and nine fractional digits
	CASE WHEN json_type(b.j, '$.cost.usd') = 'text' THEN
		CASE WHEN instr(json_extract(b.j, '$.cost.usd'), '.') > 0 THEN
			CAST(substr(json_extract(b.j, '$.cost.usd'), 1, instr(json_extract(b.j, '$.cost.usd'), '.') - 1) AS INTEGER) * 1000000000 +
			CAST(substr(substr(json_extract(b.j, '$.cost.usd'), instr(json_extract(b.j, '$.cost.usd'), '.') + 1) || '000000000', 1, 9) AS INTEGER)
		ELSE CAST(json_extract(b.j, '$.cost.usd') AS INTEGER) * 1000000000 END
	END
FROM messages m
JOIN conversations c ON c.pk = m.conv
JOIN (SELECT conv, pos, CAST(body AS TEXT) AS j FROM messages WHERE role = 'assistant') b ON b.conv = m.conv AND b.pos = m.pos
WHERE m.role = 'assistant' AND json_valid(b.j)
	AND (json_type(b.j, '$.usage') = 'object' OR json_type(b.j, '$.cost') = 'object');
