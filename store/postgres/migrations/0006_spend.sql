-- Spend counters (store.SpendKeeper): what a tenant's counter key was
-- charged on a UTC day, in nano-dollars, added to by the writes that
-- record the spend (store.Write.Charges), in their transaction, so that
-- several gateways on one database share them. A month is the sum of its
-- days' rows.

CREATE TABLE spend (
	tenant text COLLATE "C" NOT NULL,
	key    text COLLATE "C" NOT NULL,
	day    date   NOT NULL,
	usd    bigint NOT NULL CHECK (usd >= 0),
	PRIMARY KEY (tenant, key, day)
);
