# shellcheck shell=bash
# Sourced by .ci/run (under set -euo pipefail): points the PostgreSQL store
# tests at the local server through CONVO_TEST_POSTGRES, starting the server
# first if it is installed but stopped. Without a reachable server CI fails,
# so the PostgreSQL tests can never skip unnoticed; CONVO_SKIP_POSTGRES=1
# says to run without them (they then skip, saying how to run them).
# CONVO_TEST_POSTGRES set beforehand is kept as it is.

convo_pg_setup() {
	if [ -n "${CONVO_TEST_POSTGRES:-}" ]; then
		echo "== postgres: using CONVO_TEST_POSTGRES from the environment"
		return 0
	fi
	if ! command -v psql >/dev/null 2>&1; then
		convo_pg_missing "psql is not installed"
		return
	fi
	local host=127.0.0.1 port=5432 db=test
	# Start the cluster when it is installed but not running.
	if command -v pg_ctlcluster >/dev/null 2>&1 && command -v pg_isready >/dev/null 2>&1 &&
		[ -d /etc/postgresql ] && ! pg_isready -q -h "$host" -p "$port" >/dev/null 2>&1; then
		local version
		for version in /etc/postgresql/*; do
			[ -d "$version/main" ] || continue
			echo "== postgres: starting cluster $(basename "$version")/main"
			pg_ctlcluster --skip-systemctl-redirect "$(basename "$version")" main start || true
		done
		local i
		for i in 1 2 3 4 5 6 7 8 9 10; do
			pg_isready -q -h "$host" -p "$port" >/dev/null 2>&1 && break
			sleep 1
		done
	fi
	# The first user that trust authentication lets in and that may create
	# schemas in the test database (each test makes one of its own).
	local user
	for user in "$(id -un)" root postgres; do
		if psql -X -q -w -h "$host" -p "$port" -U "$user" -d "$db" -tAc \
			"SELECT has_database_privilege(current_user, current_database(), 'CREATE')" 2>/dev/null | grep -qx t; then
			export CONVO_TEST_POSTGRES="postgres://$user@$host:$port/$db?sslmode=disable"
			echo "== postgres: CONVO_TEST_POSTGRES=$CONVO_TEST_POSTGRES"
			return 0
		fi
	done
	convo_pg_missing "no server with trust authentication at $host:$port/$db"
}

# convo_pg_missing fails CI, naming the reason, unless CONVO_SKIP_POSTGRES=1.
convo_pg_missing() {
	if [ "${CONVO_SKIP_POSTGRES:-}" = 1 ]; then
		echo "== postgres: $1; CONVO_SKIP_POSTGRES=1, so the PostgreSQL tests will skip"
		return 0
	fi
	echo "== postgres: $1." >&2
	echo "   Start PostgreSQL (see .ci/postgres.sh), set CONVO_TEST_POSTGRES, or set CONVO_SKIP_POSTGRES=1 to run without it." >&2
	return 1
}

convo_pg_setup
unset -f convo_pg_setup convo_pg_missing
