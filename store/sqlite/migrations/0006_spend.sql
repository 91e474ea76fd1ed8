-- Spend counters (store.SpendKeeper): what a tenant's counter key was
-- charged on a UTC day (YYYY-MM-DD), in nano-dollars, added to by the
-- writes that record the spend (store.Write.Charges), in their
-- transaction. A month is the sum of its days' rows.

CREATE TABLE spend (
	tenant TEXT    NOT NULL,
	key    TEXT    NOT NULL,
	day    TEXT    NOT NULL,
	usd    INTEGER NOT NULL CHECK (usd >= 0),
	PRIMARY KEY (tenant, key, day)
) STRICT, WITHOUT ROWID;
