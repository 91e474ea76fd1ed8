-- The partitioned layout (postgres.Options.Partitions, docs/store.md,
-- "Partitioning"): migration 1 for a schema created with its tables
-- PARTITION BY HASH (tenant), each in N partitions. A tenant's rows of every
-- table land in the partitions of the same number, so a tenant's data is
-- together and the work of many writers is spread over N sets of indexes.
-- The columns are those of ../0001_init.sql; what differs is that every
-- table a conversation owns carries its tenant (the partition key), and
-- every primary key, unique constraint and foreign key includes it, as
-- PostgreSQL requires of a partitioned table. Migrations without a file of
-- their own here apply as they are to both layouts.

-- convo_partition gives the partitioned table parent n hash partitions,
-- named parent_p0 … parent_p{n-1}, in its schema.
CREATE FUNCTION convo_partition(parent regclass, n integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	sch text;
	rel text;
BEGIN
	IF n IS NULL OR n < 1 THEN
		RAISE EXCEPTION 'convo_partition(%): % partitions; want at least 1', parent, n;
	END IF;
	SELECT ns.nspname, c.relname INTO sch, rel FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;
	FOR k IN 0 .. n - 1 LOOP
		EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
			sch, rel || '_p' || k, parent, n, k);
	END LOOP;
END $$;

CREATE TABLE conversations (
	pk          bigint GENERATED ALWAYS AS IDENTITY,
	tenant      text COLLATE "C" NOT NULL,
	id          text COLLATE "C" NOT NULL,
	title       text        NOT NULL,
	meta        text,
	version     bigint      NOT NULL,
	messages    integer     NOT NULL,
	next_pos    bigint      NOT NULL,
	open_calls  text,
	forked_from text        NOT NULL,
	forked_at   integer     NOT NULL,
	created     timestamptz NOT NULL,
	updated     timestamptz NOT NULL,
	-- pk alone is unique (one sequence for every partition); the key
	-- names tenant too because a partitioned table's keys must.
	PRIMARY KEY (pk, tenant),
	CONSTRAINT conversations_tenant_id UNIQUE (tenant, id)
) PARTITION BY HASH (tenant);

-- The number of partitions comes from the program creating the schema
-- (set_config('convo.partitions', …) in the migrating transaction).
SELECT convo_partition('conversations', current_setting('convo.partitions')::integer);

-- convo_partitions is the number of partitions of the schema: those of
-- conversations, fixed when the schema was created. A later migration
-- that adds a partitioned table gives it as many.
CREATE FUNCTION convo_partitions() RETURNS integer LANGUAGE sql STABLE AS $$
	SELECT count(*)::integer FROM pg_inherits WHERE inhparent = 'conversations'::regclass
$$;

CREATE INDEX conversations_list ON conversations (tenant, created DESC, id DESC);

CREATE TABLE messages (
	conv   bigint NOT NULL,
	pos    bigint NOT NULL,
	id     text COLLATE "C" NOT NULL,
	role   text   NOT NULL,
	body   bytea  NOT NULL,
	tenant text COLLATE "C" NOT NULL, -- the conversation's
	PRIMARY KEY (conv, pos, tenant),
	CONSTRAINT messages_conv_id UNIQUE (conv, id, tenant),
	FOREIGN KEY (conv, tenant) REFERENCES conversations (pk, tenant) ON DELETE CASCADE
) PARTITION BY HASH (tenant);

SELECT convo_partition('messages', convo_partitions());
